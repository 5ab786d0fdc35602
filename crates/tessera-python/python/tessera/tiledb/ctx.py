"""``Config`` and ``Ctx``: libtiledb's configuration keys, carried as
TileDB-Py carries them. The storage keys (``vfs.s3.*``, ``vfs.azure.*``,
``vfs.gcs.*``) reach tessera's object stores; the ``sm.*`` keys reach the
operations that read them (consolidation and vacuum modes, ...); every
other key is kept and given back, and changes nothing."""

import contextlib

from tessera._storage_keys import storage_options

from .libtiledb import TileDBError

# The keys every Config shows, with libtiledb 2.30's defaults, as
# TileDB-Py's Config lists them: those tessera's operations read.
DEFAULTS = {
    "sm.consolidation.mode": "fragments",
    "sm.consolidation.steps": "4294967295",
    "sm.consolidation.step_min_frags": "4294967295",
    "sm.consolidation.step_max_frags": "4294967295",
    "sm.consolidation.step_size_ratio": "0.0",
    "sm.consolidation.amplification": "1.0",
    "sm.consolidation.buffer_size": "50000000",
    "sm.consolidation.timestamp_start": "0",
    "sm.consolidation.timestamp_end": "18446744073709551615",
    "sm.vacuum.mode": "fragments",
    "sm.memory_budget": "5368709120",
    "sm.memory_budget_var": "10737418240",
    "sm.dedup_coords": "false",
    "sm.check_coord_dups": "true",
    "sm.check_coord_oob": "true",
    "sm.check_global_order": "true",
    "sm.tile_cache_size": "10000000",
    "sm.io_concurrency_level": "2",
    "sm.compute_concurrency_level": "2",
    "sm.var_offsets.bitsize": "64",
    "sm.var_offsets.extra_element": "false",
    "sm.var_offsets.mode": "bytes",
    "sm.encryption_type": "NO_ENCRYPTION",
    "sm.encryption_key": "",
    "vfs.s3.region": "us-east-1",
    "vfs.s3.scheme": "https",
    "vfs.s3.endpoint_override": "",
    "vfs.s3.use_virtual_addressing": "true",
    "vfs.s3.aws_access_key_id": "",
    "vfs.s3.aws_secret_access_key": "",
    "vfs.s3.aws_session_token": "",
    "vfs.azure.storage_account_name": "",
    "vfs.azure.storage_account_key": "",
    "vfs.azure.storage_sas_token": "",
    "vfs.azure.blob_endpoint": "",
    "vfs.gcs.project_id": "",
    "vfs.gcs.service_account_key": "",
    "vfs.gcs.endpoint": "",
    "vfs.file.posix_file_permissions": "644",
    "vfs.file.posix_directory_permissions": "755",
}


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Config:
    """libtiledb's configuration: a mapping of keys to text values, the
    defaults of the keys tessera reads filled in."""

    def __init__(self, params=None, path=None):
        self._values = dict(DEFAULTS)
        self._set = set()
        if path is not None:
            self.from_file(path)
        if params is not None:
            self.update(params)

    @staticmethod
    def load(uri):
        """A Config read from the file at ``uri`` (``key value`` lines)."""
        return Config(path=uri)

    def __setitem__(self, key, value):
        self._values[str(key)] = _text(value)
        self._set.add(str(key))

    def get(self, key, raise_keyerror=True):
        try:
            return self[key]
        except KeyError:
            if raise_keyerror:
                raise
            return None

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise TypeError("config key must be a string")
        if key not in self._values:
            raise KeyError(key)
        return self._values[key]

    def __delitem__(self, key):
        if key in DEFAULTS:
            self._values[key] = DEFAULTS[key]
        else:
            self._values.pop(key, None)
        self._set.discard(key)

    def __contains__(self, key):
        return key in self._values

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._values)

    def __eq__(self, other):
        if not isinstance(other, Config):
            return NotImplemented
        return self._values == other._values

    def __repr__(self):
        return "\n".join(f"{k!r}: {v!r}" for k, v in self.items())

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in self.items())
        return f"<table><tr><th>Parameter</th><th>Value</th></tr>{rows}</table>"

    def items(self, prefix=""):
        return [(k, v) for k, v in sorted(self._values.items()) if k.startswith(prefix)]

    def keys(self, prefix=""):
        return [k for k, _ in self.items(prefix)]

    def values(self, prefix=""):
        return [v for _, v in self.items(prefix)]

    def dict(self, prefix=""):
        return dict(self.items(prefix))

    def clear(self):
        self._values = dict(DEFAULTS)
        self._set = set()

    def update(self, odict):
        for k, v in dict(odict).items():
            self[k] = v

    def from_file(self, path):
        """Sets the keys of the file at ``path``: one ``key value`` a line."""
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise TileDBError(f"Config: cannot read {path}: {e}") from None
        for line in lines:
            parts = line.split(None, 1)
            if parts and not parts[0].startswith("#"):
                self[parts[0]] = parts[1].strip() if len(parts) > 1 else ""

    def save(self, uri):
        """Writes the keys set on this config to ``uri``, as :meth:`from_file` reads them."""
        with open(uri, "w") as f:
            for k, v in self.items():
                f.write(f"{k} {v}\n")

    def storage_options(self):
        """The storage options the keys set on this config give tessera's
        object stores (defaults give none: the environment's stand)."""
        return storage_options({k: self._values[k] for k in self._set if self._values.get(k, "") != ""})

    def __reduce__(self):
        return (Config, (self.dict(),))


class Ctx:
    """A context: a :class:`Config` the operations given it read."""

    def __init__(self, config=None):
        if config is None:
            config = Config()
        elif not isinstance(config, Config):
            config = Config(config)
        self._config = config
        self._tags = {}

    def config(self):
        return self._config

    def set_tag(self, key, value):
        self._tags[key] = value

    def get_stats(self, print_out=True, json=False):
        """The statistics kept (see :mod:`.stats`: the process's, as
        TileDB-Py's are libtiledb's)."""
        from . import stats

        text = stats.render(*stats.snapshot(), json)
        if print_out and text:
            print(text)
        return text

    def __repr__(self):
        return "tiledb.Ctx() [see Ctx.config() for configuration]"

    def __reduce__(self):
        return (Ctx, (self._config,))


_default = None


def default_ctx(config=None):
    """The process's default context, made at the first call (with
    ``config`` if given); a later ``config`` is an error, as in TileDB-Py."""
    global _default
    if _default is None:
        _default = Ctx(config)
    elif config is not None:
        raise TileDBError("Global context already initialized!")
    return _default


def _as_ctx(ctx_or_config):
    if ctx_or_config is None or isinstance(ctx_or_config, Ctx):
        return ctx_or_config
    return Ctx(ctx_or_config)


@contextlib.contextmanager
def scope_ctx(ctx_or_config=None):
    """Within the block, the default context is ``ctx_or_config``."""
    global _default
    previous = _default
    _default = _as_ctx(ctx_or_config) or default_ctx()
    try:
        yield _default
    finally:
        _default = previous


def local_path(uri):
    """The path of a local ``uri`` (a path, or ``file://``), None for an
    object store's."""
    uri = str(uri)
    if "://" in uri and not uri.startswith("file://"):
        return None
    return uri.removeprefix("file://")


def storage(uri, ctx):
    """The native storage options for ``uri``: the context's storage keys
    for an object store's URI, none for a local path (libtiledb's storage
    keys reach object stores only)."""
    from tessera._convert import storage_pairs

    return [] if local_path(uri) is not None else storage_pairs(options_of(ctx))


def options_of(ctx):
    """The storage options of ``ctx`` (a Ctx, a Config, or None: the
    default context)."""
    if isinstance(ctx, (Config, dict)):
        ctx = Ctx(ctx)
    if ctx is not None and not isinstance(ctx, Ctx):
        raise TypeError(f"ctx must be a tiledb.Ctx, not {type(ctx).__name__}")
    return (ctx or default_ctx()).config().storage_options()


def encryption_key(ctx):
    """The key ``sm.encryption_key`` gives in ``ctx``'s configuration (a
    Ctx, a Config, or None: the default context), or None."""
    if isinstance(ctx, (Config, dict)):
        ctx = Ctx(ctx)
    key = (ctx or default_ctx()).config().get("sm.encryption_key", raise_keyerror=False)
    return key or None
