"""TileDB-Py's functions over URIs: ``open``, ``array_exists``,
``object_type``, ``from_numpy``, ``schema_like``, ``empty_like``,
``remove``, ``move``, ``ls``, ``walk``."""

import os

import numpy as np

from tessera import _native

from ._open import object_type, open_native, remove  # noqa: F401 (remove: part of this module's API)
from .array import Array, DenseArray
from .array_schema import ArraySchema
from .attribute import Attr
from .ctx import Config, Ctx
from .dimension import Dim
from .domain import Domain
from .libtiledb import TileDBError


def _ctx(ctx, config):
    if config is not None:
        if ctx is not None:
            raise ValueError("Received extra Ctx or Config argument: either one may be provided, but not both")
        return Ctx(config if isinstance(config, Config) else Config(config))
    return ctx


def open(uri, mode="r", key=None, attr=None, config=None, timestamp=None, ctx=None):
    """Opens the array at ``uri`` as a :class:`DenseArray` or :class:`SparseArray`."""
    return Array.load_typed(uri, mode=mode, key=key, timestamp=timestamp, attr=attr, ctx=_ctx(ctx, config))


def array_exists(uri, isdense=False, issparse=False, ctx=None):
    """Whether an array is at ``uri`` (and dense or sparse, if asked)."""
    if object_type(uri, ctx) != "array":
        return False
    if not (isdense or issparse):
        return True
    try:
        sparse = ArraySchema.load(uri, ctx=ctx).sparse
    except TileDBError:
        return False
    return sparse if issparse else not sparse


def schema_like(*args, shape=None, dtype=None, ctx=None, **kwargs):
    """A dense schema for an array like ``args[0]`` (a numpy array), or of
    ``shape`` and ``dtype``."""
    if args:
        like = args[0]
        shape, dtype = like.shape, like.dtype
        if dtype.kind == "O":
            # Objects: text or bytes, as their values are (text when empty).
            values = list(np.asarray(like).ravel())
            dtype = np.dtype("S") if values and all(isinstance(v, bytes) for v in values) else np.dtype("U")
    if shape is None or dtype is None:
        raise ValueError("schema_like: give an array, or shape and dtype")
    tiles = kwargs.pop("tile", None)
    full_domain = kwargs.pop("full_domain", False)
    dims = []
    for i, n in enumerate(shape):
        tile = tiles[i] if isinstance(tiles, (list, tuple)) else tiles
        tile = tile if tile is not None else min(n, 10000)
        # A full domain spans every uint64 a tile leaves room for (arrays
        # appended to grow into it).
        hi = np.iinfo(np.uint64).max - tile if full_domain else n - 1
        dims.append(Dim(name=f"__dim_{i}", domain=(0, hi), tile=tile, dtype=np.uint64))
    attr_name = kwargs.pop("attr_name", "")
    attr = Attr(name=attr_name, dtype=dtype, var=kwargs.pop("var", None), filters=kwargs.pop("filters", None))
    return ArraySchema(domain=Domain(*dims), attrs=(attr,), **kwargs)


def empty_like(uri, arr, config=None, key=None, tile=None, ctx=None, dtype=None):
    """Creates an empty dense array at ``uri`` like the numpy array ``arr``."""
    schema = schema_like(arr, tile=tile)
    DenseArray.create(uri, schema, key=key, ctx=_ctx(ctx, config))
    return DenseArray(uri, mode="w", key=key, ctx=_ctx(ctx, config))


def from_numpy(uri, array, config=None, ctx=None, **kwargs):
    """Writes the numpy array ``array`` as a new dense array at ``uri``
    (``mode="append"`` adds it along ``append_dim``); returns the array
    open for reading."""
    mode = kwargs.pop("mode", "ingest")
    timestamp = kwargs.pop("timestamp", None)
    ctx = _ctx(ctx, config)
    if not isinstance(array, np.ndarray):
        raise Exception("from_numpy must be called with a numpy.ndarray")
    if mode not in ("ingest", "schema_only", "append"):
        raise TileDBError(f"from_numpy: unknown mode {mode!r}")
    if mode != "append":
        schema = schema_like(array, **kwargs)
        DenseArray.create(uri, schema, ctx=ctx)
    if mode == "append":
        _append(uri, array, kwargs.pop("append_dim", 0), kwargs.pop("start_idx", None), timestamp, ctx)
    elif mode != "schema_only":
        # The array's own box: a full domain is far larger.
        _write_at(uri, array, [0] * array.ndim, timestamp, ctx)
    return DenseArray(uri, mode="r", ctx=ctx)


def _append(uri, array, append_dim, start_idx, timestamp, ctx):
    """Writes ``array`` after what the array at ``uri`` holds along
    ``append_dim`` (or from ``start_idx`` there), at the start of every
    other dimension."""
    with DenseArray(uri, ctx=ctx) as A:
        ndim, ned = A.schema.ndim, A.nonempty_domain()
    if not 0 <= append_dim < ndim:
        raise IndexError(f"from_numpy: append_dim {append_dim} is not a dimension of a {ndim}-d array")
    if array.ndim != ndim:
        raise ValueError(f"from_numpy: a {array.ndim}-d array appended to a {ndim}-d one")
    starts = [0] * ndim
    starts[append_dim] = start_idx if start_idx is not None else (0 if ned is None else int(ned[append_dim][1]) + 1)
    _write_at(uri, array, starts, timestamp, ctx)


def _write_at(uri, array, starts, timestamp, ctx):
    """Writes ``array`` into the box starting at ``starts``, its shape."""
    bounds = [(np.uint64(lo), np.uint64(lo + n - 1)) for lo, n in zip(starts, array.shape)]
    with DenseArray(uri, mode="w", timestamp=timestamp, ctx=ctx) as A:
        A._write_box(bounds, array)


def move(old_uri, new_uri, ctx=None):
    """Moves the array or group at ``old_uri`` to ``new_uri``."""
    if object_type(old_uri, ctx) is None:
        raise TileDBError(f"move: no array or group at {old_uri}")
    os.rename(str(old_uri).removeprefix("file://"), str(new_uri).removeprefix("file://"))


def ls(path, func, ctx=None):
    """Calls ``func(uri, type)`` for each array and group directly in ``path``."""
    path = str(path).removeprefix("file://")
    for name in sorted(os.listdir(path)):
        uri = os.path.join(path, name)
        kind = object_type(uri, ctx)
        if kind is not None:
            func("file://" + uri if str(path).startswith("file://") else uri, kind)


def walk(path, func, order="preorder", ctx=None):
    """Calls ``func(uri, type)`` for each array and group under ``path``."""
    if order not in ("preorder", "postorder"):
        raise ValueError("unknown walk order")

    def visit(p):
        for name in sorted(os.listdir(p)):
            uri = os.path.join(p, name)
            kind = object_type(uri, ctx)
            if kind is None:
                continue
            if order == "preorder":
                func(uri, kind)
            if kind == "group":
                visit(uri)
            if order == "postorder":
                func(uri, kind)

    visit(str(path).removeprefix("file://"))
