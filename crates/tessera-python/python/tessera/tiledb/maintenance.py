"""``tiledb.consolidate`` and ``tiledb.vacuum``: what libtiledb's
consolidation and vacuum do, in the mode the configuration names
(``sm.consolidation.mode``, ``sm.vacuum.mode``: fragments, commits,
fragment_meta, array_meta), with tessera's writer."""

import warnings

from tessera import _native

from ._open import errors
from .ctx import Config, Ctx, default_ctx, storage
from .fragment import FragmentInfoList
from .libtiledb import TileDBError

_NO_END = 18446744073709551615


def _config(config, ctx):
    """The context's configuration with the keys ``config`` sets over it:
    as in TileDB-Py, ``config`` shapes the operation and the context's
    storage keys still reach the store."""
    base = (ctx or default_ctx()).config()
    if config is None:
        return base
    given = config if isinstance(config, Config) else Config(config)
    merged = Config({k: base[k] for k in base._set})
    merged.update({k: given[k] for k in given._set})
    return merged


def _window(cfg, timestamp):
    if timestamp is not None:
        lo, hi = timestamp
        return (int(lo or 0), int(hi) if hi is not None else _NO_END)
    lo = int(cfg.get("sm.consolidation.timestamp_start", raise_keyerror=False) or 0)
    hi = int(cfg.get("sm.consolidation.timestamp_end", raise_keyerror=False) or _NO_END)
    return (lo, hi) if (lo, hi) != (0, _NO_END) else None


def _fragments_window(uri, fragment_uris, ctx):
    """The timestamp window that holds exactly the fragments named."""
    names = {str(u).rstrip("/").rsplit("/", 1)[-1] for u in fragment_uris}
    fragments = list(FragmentInfoList(uri, ctx=ctx))
    chosen = [f for f in fragments if f.name in names]
    if len(chosen) != len(names):
        raise TileDBError(f"consolidate: {uri} has no fragment among {sorted(names - {f.name for f in chosen})}")
    lo = min(f.timestamp_range[0] for f in chosen)
    hi = max(f.timestamp_range[1] for f in chosen)
    inside = [f for f in fragments if lo <= f.timestamp_range[0] and f.timestamp_range[1] <= hi]
    if len(inside) != len(chosen):
        raise TileDBError("consolidate: the fragments named are not all the fragments of their time window; "
                          "tessera consolidates a window of fragments")
    return (lo, hi)


def consolidate(uri, config=None, ctx=None, fragment_uris=None, timestamp=None):
    """Consolidates the array at ``uri`` in the configured mode (default
    fragments); returns ``uri``."""
    cfg = _config(config, ctx)
    mode = cfg.get("sm.consolidation.mode", raise_keyerror=False) or "fragments"
    if fragment_uris and timestamp is not None:
        warnings.warn("The `timestamp` argument will be ignored and only fragments passed to `fragment_uris` "
                      "will be consolidated", DeprecationWarning, stacklevel=2)
    window = _fragments_window(uri, fragment_uris, ctx) if fragment_uris else _window(cfg, timestamp)
    purge = (cfg.get("sm.consolidation.purge_deleted_cells", raise_keyerror=False) or "false") == "true"
    key = cfg.get("sm.encryption_key", raise_keyerror=False) or None
    errors(_native.consolidate, str(uri), mode, window, None, purge, key, None,
           storage(uri, Ctx(cfg)))
    return str(uri)


def vacuum(uri, config=None, ctx=None, timestamp=None):
    """Removes what consolidation replaced, in the configured mode
    (``sm.vacuum.mode``, default fragments); with ``timestamp`` (or
    ``sm.vacuum.timestamp_start``/``_end``), only what consolidations
    written within that window replaced."""
    cfg = _config(config, ctx)
    mode = cfg.get("sm.vacuum.mode", raise_keyerror=False) or "fragments"
    key = cfg.get("sm.encryption_key", raise_keyerror=False) or None
    if timestamp is not None:
        warnings.warn("Partial vacuuming via timestamp will be deprecrated in a future release and replaced by "
                      "passing in fragment URIs.", DeprecationWarning, stacklevel=2)
        window = (int(timestamp[0] or 0), int(timestamp[1]) if timestamp[1] is not None else _NO_END)
    else:
        lo = int(cfg.get("sm.vacuum.timestamp_start", raise_keyerror=False) or 0)
        hi = int(cfg.get("sm.vacuum.timestamp_end", raise_keyerror=False) or _NO_END)
        window = (lo, hi) if (lo, hi) != (0, _NO_END) else None
    errors(_native.vacuum, str(uri), mode, key, storage(uri, Ctx(cfg)), window)


def delete_fragments(uri, timestamp_start, timestamp_end, ctx=None):
    """Deletes the fragments of the array at ``uri`` written within
    ``[timestamp_start, timestamp_end]``: each commit before its folder,
    as libtiledb deletes them."""
    errors(_native.delete_fragments, str(uri), int(timestamp_start), int(timestamp_end), None,
           storage(str(uri), ctx))
