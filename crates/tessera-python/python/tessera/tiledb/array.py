"""Arrays as TileDB-Py opens them: ``tiledb.open(uri, mode)`` gives a
:class:`DenseArray` or :class:`SparseArray`, indexed with numpy's
half-open slices (``A[1:3, :]``), written by assignment
(``A[:] = data``), over tessera's reads and writes."""

import json
import os
import shutil
import time
import warnings
from collections import OrderedDict

import numpy as np
import pyarrow as pa

from tessera import _native

from ._open import errors, object_type, open_native, remove
from ._values import extent, from_json
from ._values import native_bound as _native_bound
from .array_schema import ArraySchema
from .ctx import encryption_key, storage
from . import stats
from .libtiledb import TileDBError
from ._buffers import _checked_values, _field_numpy
from .label_query import resolved_ranges, write_labels
from .multirange_indexing import LabelIndexer, enumeration_values
from .subarray import Subarray

MODES = ("r", "w", "d", "m", "modify_exclusive")


def _timestamp(timestamp):
    if timestamp is None:
        return None
    if isinstance(timestamp, tuple):
        lo, hi = timestamp
        return (0 if lo is None else int(lo), int(hi) if hi is not None else (1 << 63) - 1)
    return int(timestamp)


class Array:
    """An open array (``mode`` ``"r"`` to read, ``"w"`` to write, ``"d"``
    to delete, ``"m"`` to change metadata)."""

    def __init__(self, uri, mode="r", key=None, timestamp=None, attr=None, ctx=None):
        if mode not in MODES:
            raise TileDBError(f"TileDB array mode must be one of {MODES}")
        self._uri = str(uri)
        self._mode = mode
        self._key = key.decode() if isinstance(key, bytes) else key
        if self._key is None:
            self._key = encryption_key(ctx)
        self._ctx = ctx
        self._timestamp = _timestamp(timestamp)
        self._opened_at = int(time.time() * 1000)
        self._native = open_native(self._uri, ctx, self._key, self._timestamp if mode == "r" else None)
        self._meta_entries = None
        self._schema = ArraySchema.from_json(self._native.schema_json())._anchored(self._uri)
        if self._schema.sparse != self._sparse_kind() and self._sparse_kind() is not None:
            kind = "sparse" if self._schema.sparse else "dense"
            raise ValueError(f"Array at {self._uri} is {kind}; open it with the {kind} class or tiledb.open")
        if attr is not None and not self._schema.has_attr(attr):
            raise KeyError(attr)
        self._view_attr = attr
        self._open = True

    @classmethod
    def _sparse_kind(cls):
        return None

    @classmethod
    def create(cls, uri, schema, key=None, overwrite=False, ctx=None):
        """Creates an empty array at ``uri`` with ``schema``."""
        if not isinstance(schema, ArraySchema):
            raise TypeError("schema must be a tiledb.ArraySchema")
        if cls._sparse_kind() is not None and schema.sparse != cls._sparse_kind():
            kind = "SparseArray" if schema.sparse else "DenseArray"
            raise ValueError(f"Array.create: the schema makes a {kind}")
        uri = str(uri)
        if overwrite and os.path.isdir(uri):
            shutil.rmtree(uri)
        elif overwrite:
            warnings.warn("Overwrite set, but array does not exist", UserWarning, stacklevel=2)
        if isinstance(key, bytes):
            key = key.decode()
        errors(_native.create, uri, json.dumps(schema.to_json()), key, storage(uri, ctx))

    @staticmethod
    def delete_fragments(uri, timestamp_start, timestamp_end, ctx=None):
        """Deletes the fragments of the array at ``uri`` written within
        ``[timestamp_start, timestamp_end]``."""
        from .maintenance import delete_fragments

        delete_fragments(uri, timestamp_start, timestamp_end, ctx)

    @staticmethod
    def delete_array(uri, ctx=None):
        """Removes the array at ``uri`` (a local one)."""
        if object_type(uri, ctx) != "array":
            raise TileDBError(f"delete_array: no array at {uri}")
        remove(uri, ctx)

    @staticmethod
    def load_typed(uri, mode="r", key=None, timestamp=None, attr=None, ctx=None):
        schema = ArraySchema.from_json(open_native(uri, ctx, key).schema_json())
        cls = SparseArray if schema.sparse else DenseArray
        return cls(uri, mode=mode, key=key, timestamp=timestamp, attr=attr, ctx=ctx)

    # What the array says about itself.

    @property
    def uri(self):
        return self._uri

    @property
    def mode(self):
        return self._mode

    @property
    def schema(self):
        if not self._open:
            raise TileDBError("Array is closed: its schema was given up with it")
        return self._schema

    def consolidate(self, config=None, key=None, fragment_uris=None, timestamp=None):
        """Consolidates this array (open for writing), as
        :func:`tiledb.consolidate` does."""
        from .maintenance import consolidate

        if self._mode == "r":
            raise TileDBError("cannot consolidate an array opened for reading")
        cfg = config if config is not None else self.ctx.config()
        if key is not None or self._key is not None:
            from .ctx import Config

            cfg = Config(dict(cfg.dict() if hasattr(cfg, "dict") else cfg))
            cfg["sm.encryption_key"] = key.decode() if isinstance(key, bytes) else (key or self._key)
        return consolidate(self._uri, config=cfg, fragment_uris=fragment_uris, timestamp=timestamp)

    def _delete_cells(self, condition):
        """Deletes the cells ``condition`` (tessera's condition text)
        selects, at the end of the array's timestamp (now by default)."""
        at = self._timestamp[1] if isinstance(self._timestamp, tuple) else self._timestamp
        errors(_native.delete_cells, self._uri, condition, self._key, storage(self._uri, self._ctx), at)

    @property
    def ctx(self):
        from .ctx import default_ctx

        return self._ctx or default_ctx()

    @property
    def isopen(self):
        return self._open

    @property
    def iswritable(self):
        return self._mode == "w"

    @property
    def view_attr(self):
        return self._view_attr

    @property
    def timestamp_range(self):
        lo, hi = self._native.timestamp_range
        # Opened at no timestamp: libtiledb's range ends when it opened.
        return (lo, self._opened_at if self._timestamp is None else hi)

    @property
    def ndim(self):
        return self._schema.ndim

    @property
    def shape(self):
        return self._schema.shape

    @property
    def domain(self):
        return self._schema.domain

    @property
    def nattr(self):
        return self._schema.nattr

    def attr(self, key):
        return self._schema.attr(key)

    def dim(self, key):
        return self._schema.domain.dim(key)

    @property
    def dtype(self):
        return self._schema.attr(0).dtype

    def nonempty_domain(self):
        ned = json.loads(self._native.nonempty_domain_json())
        if ned is None:
            return None
        out = []
        for i, ((lo, hi), d) in enumerate(zip(ned, self._schema.domain)):
            if d.isvar:
                out.append(self._native.nonempty_domain_bytes(i))
            else:
                bounds = (from_json(lo, d.dtype), from_json(hi, d.dtype))
                # Numbers as Python's, as TileDB-Py gives them; datetimes
                # stay numpy's.
                out.append(tuple(b.item() for b in bounds) if d.dtype.kind in "iuf" else bounds)
        return tuple(out)

    def enum(self, name):
        """The enumeration ``name`` of the array's schema."""
        return self.schema.enum(name)

    @property
    def meta(self):
        from .metadata import Metadata

        return Metadata(self)

    # Opening and closing.

    def close(self):
        self._open = False

    def reopen(self, timestamp=None):
        if not self._open:
            raise TileDBError("Array is closed: open it again instead")
        # As libtiledb: reopened at the timestamp given, else up to now.
        self._timestamp = _timestamp(timestamp)
        self._opened_at = int(time.time() * 1000)
        self._native = open_native(self._uri, self._ctx, self._key, self._timestamp)
        self._meta_entries = None
        self._schema = ArraySchema.from_json(self._native.schema_json())
        self._open = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check_open(self, mode):
        if not self._open:
            raise TileDBError("Array is closed")
        if mode == "r" and self._mode != "r":
            raise TileDBError(f"Array is not opened for reading (mode {self._mode!r})")
        if mode == "w" and self._mode != "w":
            raise TileDBError(f"Array is not opened for writing (mode {self._mode!r})")

    # Reads.

    def query(self, attrs=None, cond=None, dims=None, coords=None, index_col=True, order=None, use_arrow=None,
              return_arrow=False, return_incomplete=False, **kwargs):
        """A :class:`Query`: what to read, indexed as the array is."""
        from .query import Query

        return Query(self, attrs=attrs, cond=cond, dims=dims, coords=coords, index_col=index_col, order=order,
                     use_arrow=use_arrow, return_arrow=return_arrow, return_incomplete=return_incomplete)

    @property
    def multi_index(self):
        from .query import Query

        return Query(self).multi_index

    @property
    def df(self):
        from .query import Query

        # Coordinates are columns of A.df, dense or sparse, as TileDB-Py gives them.
        return Query(self, coords=True).df

    @property
    def _read_attrs(self):
        """The attributes a plain read gives: the one opened with, or all."""
        return [self._view_attr] if self._view_attr else self._schema.attr_names

    def _assigned(self, value, scalars):
        """``(attribute, values)`` pairs an assignment of ``value`` writes:
        a dict by attribute, else the attribute opened with or the only one
        (with ``scalars``, a scalar for every attribute)."""
        if isinstance(value, dict):
            return list(value.items())
        if value is None and self._schema.nattr == 0:
            return []
        if self._view_attr is not None:
            return [(self._view_attr, value)]
        if self._schema.nattr == 1:
            return [(self._schema.attr(0).name, value)]
        if scalars and np.isscalar(value):
            return [(a.name, value) for a in self._schema]
        raise ValueError("ambiguous attribute assignment, more than one array attribute "
                         "(use a dict({'attr': val}) to assign multiple attributes)")

    def _read_ranges(self, subarray, attrs, dims, query, shape=None):
        """The cells in ``subarray`` (native ranges by dimension name):
        ``OrderedDict`` of numpy arrays, dimensions then attributes;
        shaped when the array is dense and ``shape`` is whole."""
        schema = self._schema
        cond = query._cond_text() if query is not None else None
        out = self._fields(self._table(subarray or None, attrs, list(dims), self._layout(query), cond), attrs, dims)
        if not schema.sparse and shape and all(n is not None for n in shape):
            n = int(np.prod(shape))
            for k, v in out.items():
                if len(v) == n:
                    out[k] = v.reshape(shape)
        return out

    def read_subarray(self, subarray):
        """The cells in a :class:`Subarray`'s ranges: dimensions (sparse)
        then attributes; a dense array's shaped by the ranges, in the order
        they were added."""
        from .query import Query

        attrs = self._read_attrs
        dims = [d.name for d in self._schema.domain] if self._schema.sparse else []
        if subarray._label_ranges:
            found = resolved_ranges(self, subarray._ranges, subarray._label_ranges)
            subarray = Subarray(self)
            subarray.add_ranges([r or [] for r in found])
        if self._schema.sparse:
            return self._read_combinations(subarray.ranges(), attrs, dims, Query(self))
        # A dense read places each range after the one before, as given.
        domain = list(self._schema.domain)
        ranges = {d.name: [tuple(_native_bound(v, d) for v in r) for r in rs]
                  for d, rs in zip(domain, subarray.ranges())}
        return self._read_ranges(ranges, attrs, dims, Query(self), subarray.shape())

    def label_index(self, labels):
        """``[...]`` by label: each dimension with one of ``labels`` is
        selected by ranges of its labels, which the result holds too."""
        from .query import Query

        return LabelIndexer(self, labels, Query(self))

    def _read_combinations(self, ranges, attrs, dims, query):
        """Reads each combination of ranges (one per dimension) of a sparse
        array in turn, so the cells come in the order the ranges were
        given, as libtiledb gives them."""
        import itertools

        domain = list(self._schema.domain)
        parts = []
        for combo in itertools.product(*ranges):
            sub = {d.name: [tuple(_native_bound(v, d) for v in r)] for d, r in zip(domain, combo)}
            parts.append(self._read_ranges(sub, attrs, dims, query))
        if len(parts) == 1:
            return parts[0]
        return OrderedDict((k, np.concatenate([p[k] for p in parts])) for k in parts[0])

    def _answer(self, out, coords):
        """A read's fields as the array kind gives them."""
        return out

    def _masked_nullable(self, out):
        """``out`` with every nullable attribute's values a masked array,
        nulls or not, as TileDB-Py's ``[...]`` gives them."""
        for k, v in out.items():
            if self._schema.has_attr(k) and self._schema.attr(k).isnullable and not isinstance(v, np.ma.MaskedArray):
                out[k] = np.ma.MaskedArray(v, mask=np.zeros(np.shape(v), dtype=bool))
        return out

    @property
    def last_write_info(self):
        """The fragments the last write through this handle made: URI to
        ``(t1, t2)``; None before any."""
        return getattr(self, "_last_write_info", None)

    def _layout(self, query):
        """The native layout a query reads in (a dense array's row-major by
        default)."""
        from .query import _ORDERS

        layout = _ORDERS[query.order] if query is not None else None
        return "row-major" if layout is None and not self._schema.sparse else layout

    def _fields(self, table, attrs, dims):
        """An Arrow table's (or batch's) columns as TileDB-Py gives them:
        ``OrderedDict`` of numpy arrays, dimensions then attributes."""
        out = OrderedDict()
        with stats.timer("py.getitem_time.buffer_conversion_time"):
            self._convert(table, attrs, dims, out)
        return out

    def _convert(self, table, attrs, dims, out):
        schema = self._schema
        for name in dims:
            out[name] = _field_numpy(table.column(name), schema.domain.dim(name).dtype)
        for name in attrs:
            out[name] = _field_numpy(table.column(name), schema.attr(name).dtype, schema.attr(name).isnullable)

    def _reader(self, subarray, attrs, dims, layout=None, cond=None, budget=1 << 30):
        """A ``pyarrow.RecordBatchReader`` over the cells, in batches of
        about ``budget`` bytes; STRING_ASCII fields as binary, whose bytes
        need not be UTF-8 (:func:`arrow_text` makes them text)."""
        self._check_open("r")
        return errors(self._native.reader, attrs=attrs, subarray=subarray, condition=cond, layout=layout,
                      dims=dims, budget=budget, enum_values=False, ascii_as_binary=True)

    def _table(self, subarray, attrs, dims, layout=None, cond=None):
        reader = self._reader(subarray, attrs, dims, layout, cond)
        try:
            with stats.timer("tessera.read_time"):
                table = reader.read_all()
        except (pa.ArrowException, OSError) as e:
            raise TileDBError(str(e)) from None
        stats.count("tessera.reads")
        stats.count("tessera.cells_read", table.num_rows)
        return table

    def _split_labels(self, value, index_ranges):
        """``(value without its dimension labels' data, timestamp)``: the
        labels are written first over ``index_ranges`` (per dimension, a
        range or a sparse write's coordinates) at the timestamp the cells
        are then written at (None: no label was given)."""
        if not isinstance(value, dict) or not any(self._schema.has_dim_label(k) for k in value):
            return value, None
        labels = {k: v for k, v in value.items() if self._schema.has_dim_label(k)}
        self._check_open("w")
        ts = self._timestamp if isinstance(self._timestamp, int) else int(time.time() * 1000)
        write_labels(self._schema, labels, index_ranges, ts, self._ctx, self._key)
        return {k: v for k, v in value.items() if k not in labels}, ts

    def _write(self, table, subarray=None, timestamp=None):
        self._check_open("w")
        ts = self._timestamp if isinstance(self._timestamp, int) else timestamp
        with stats.timer("tessera.write_time"):
            names = errors(_native.write, self._uri, table, ts, self._key, None, subarray,
                           storage(self._uri, self._ctx), _duplicates(self.ctx.config()))
        # Each fragment by URI, with the timestamps its name holds.
        base = self._uri.rstrip("/") + "/__fragments/"
        self._last_write_info = {base + n: tuple(int(t) for t in n.split("_")[2:4]) for n in names}
        stats.count("tessera.writes")
        stats.count("tessera.cells_written", table.num_rows)

    def dump(self):
        """Prints the schema (:meth:`ArraySchema.dump`)."""
        self._schema.dump()

    def __repr__(self):
        return f"{type(self).__name__}(uri={self._uri!r}, mode={self._mode}, ndim={self.ndim})"

    def __len__(self):
        """The length of the first dimension's domain, as TileDB-Py's."""
        return int(self._schema.domain.shape[0])

    def __reduce__(self):
        # Reopened where it is unpickled (a worker, another process).
        config = self._ctx.config() if self._ctx is not None else None
        return (_reopen, (type(self), self._uri, self._mode, self._key, self._timestamp, self._view_attr, config))


def _duplicates(config):
    """What a sparse write does with cells at one coordinate, as libtiledb's
    ``sm.dedup_coords`` (first) and ``sm.check_coord_dups`` say."""
    if config.get("sm.dedup_coords", raise_keyerror=False) == "true":
        return "drop"
    if config.get("sm.check_coord_dups", raise_keyerror=False) == "false":
        return "keep"
    return "refuse"


def _reopen(cls, uri, mode, key, timestamp, attr, config):
    from .ctx import Ctx

    return cls(uri, mode=mode, key=key, timestamp=timestamp, attr=attr, ctx=Ctx(config) if config else None)


def _normalize_index(key, ndim):
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - len(key) + 1) + key[i + 1:]
    if len(key) > ndim:
        raise IndexError("too many indices for array")
    return key + (slice(None),) * (ndim - len(key))


def _bounds(k, dim, ned=None):
    """The inclusive ``(lo, hi)`` of a half-open index on ``dim``, and
    whether it drops the axis (a scalar). On integer dimensions starting at
    0 or above, indices count as numpy's do: negative ones from the end,
    slice ends clipped to the domain."""
    lo_dom, hi_dom = dim.domain
    numpy_like = dim.dtype.kind in "iu" and int(lo_dom) >= 0
    if isinstance(k, slice):
        if k.step not in (None, 1):
            raise IndexError("steps are taken by DenseArray indexing only")
        if dim.isvar or dim.dtype.kind == "M":
            # String and datetime dimensions' slices are inclusive, as
            # TileDB-Py's.
            return (lo_dom if k.start is None else k.start, hi_dom if k.stop is None else k.stop), False
        if numpy_like:
            if k.start is not None and k.stop is not None and np.asarray([k.start, k.stop]).dtype.kind == "f":
                # As numpy promotes them (uint64 with a signed int: float).
                raise IndexError(f"{dim.name}: slice ends {k.start!r}, {k.stop!r} promote to floats")
            length = int(hi_dom) - int(lo_dom) + 1
            start, stop, _ = slice(_offset(k.start, lo_dom), _offset(k.stop, lo_dom)).indices(length)
            return (dim.dtype.type(int(lo_dom) + start), dim.dtype.type(int(lo_dom) + max(start, stop) - 1)), False
        lo = lo_dom if k.start is None else k.start
        hi = hi_dom if k.stop is None else _before(k.stop, dim)
        return (lo, hi), False
    if isinstance(k, (list, np.ndarray)):
        raise IndexError("lists of coordinates: use .multi_index")
    if k is None or isinstance(k, (str, bytes, float)) and dim.dtype.kind not in "SUaf":
        raise IndexError(f"{dim.name}: invalid index {k!r}")
    if numpy_like and isinstance(k, (int, np.integer)) and int(k) < 0:
        k = int(hi_dom) + 1 + int(k)
    return (k, k), True


def _offset(v, lo):
    """A slice end as an offset from the domain's start (negative ones
    left for ``slice.indices``)."""
    if v is None:
        return None
    v = int(v)
    return v if v < 0 else v - int(lo)


def _before(hi, dim):
    if isinstance(hi, np.datetime64):
        return hi - np.timedelta64(1, np.datetime_data(hi.dtype)[0])
    if dim.dtype.kind == "f":
        return dim.dtype.type(np.nextafter(dim.dtype.type(hi), -np.inf))
    return hi - 1


class DenseArray(Array):
    """A dense array: ``A[box]`` gives each attribute shaped like the box."""

    @classmethod
    def _sparse_kind(cls):
        return False

    def _box(self, key):
        bounds, drop = [], []
        for i, (k, d) in enumerate(zip(_normalize_index(key, self.ndim), self._schema.domain)):
            (lo, hi), dropped = _bounds(k, d)
            lo_d, hi_d = d.domain
            if np.asarray(lo) < np.asarray(lo_d) or np.asarray(hi) > np.asarray(hi_d):
                raise IndexError(f"index out of bounds: {d.name} [{lo}, {hi}] is outside the domain {d.domain}")
            bounds.append((lo, hi))
            if dropped:
                drop.append(i)
        return bounds, drop

    def __getitem__(self, key):
        out = enumeration_values(self._schema, self._read_box(key, None, (self._read_attrs, [])))
        return self._answer(out, coords=False)

    def __array__(self, dtype=None, copy=None):
        """The whole array as numpy (one attribute, or the attribute viewed)."""
        if self._view_attr is None and self._schema.nattr > 1:
            raise ValueError("cannot call __array__ for TileDB array with more than one attribute")
        name = self._view_attr or self._schema.attr(0).name
        values = self._read_box((), None, ([name], []))[name]
        return values if dtype is None or values.dtype == dtype else values.astype(dtype)

    def _answer(self, out, coords):
        """A read's fields as TileDB-Py gives them: the values alone when
        the one attribute is anonymous (or the array is a view of one)."""
        out = self._masked_nullable(out)
        if not coords and self._schema.nattr == 1 and self._schema.attr(0).isanon:
            return out[self._schema.attr(0).name]
        if self._view_attr is not None:
            return out[self._view_attr]
        return out

    def _read_box(self, key, query, names):
        attrs, dims = names
        key = _normalize_index(key, self.ndim)
        # Steps are taken from the whole box read.
        steps = tuple(slice(None, None, k.step) if isinstance(k, slice) else slice(None) for k in key)
        if any(isinstance(k, slice) and k.step is not None and k.step < 0 and
               (k.start, k.stop) != (None, None) for k in key):
            raise IndexError("a negative slice step takes a whole dimension")
        key = tuple(slice(k.start, k.stop) if isinstance(k, slice) else k for k in key)
        bounds, drop = self._box(key)
        domain = list(self._schema.domain)
        subarray = {d.name: [tuple(_native_bound(v, d) for v in b)] for d, b in zip(domain, bounds)}
        # Cells in global order come from [...] as they are, not as a box.
        in_order = query is not None and query.order == "G"
        shape = None if in_order else [extent(lo, hi) for lo, hi in bounds]
        out = self._read_ranges(subarray, attrs, dims, query, shape)
        if in_order:
            return out
        for k, v in out.items():
            if v.ndim == len(shape):
                v = v[steps]
                out[k] = v.squeeze(axis=tuple(drop)) if drop else v
        return out

    def subarray(self, selection, attrs=None, cond=None, coords=False, order=None):
        from .query import Query

        q = Query(self, attrs=attrs, cond=cond, coords=coords, order=order)
        return q[selection]

    def read_direct(self, name=None):
        """One attribute (the only one when ``name`` is None) over the
        whole domain, as a numpy array."""
        self._check_open("r")
        if name is None and self._schema.nattr != 1:
            raise ValueError("read_direct with no provided attribute is ambiguous for multi-attribute arrays")
        name = self._schema.attr(0).name if name is None else self._schema.attr(name).name
        return self._read_box((), None, ([name], []))[name]

    def _setitem_impl(self, selection, value, nullmaps):
        """Writes ``value`` at ``selection``, the cells whose byte in
        ``nullmaps[attribute]`` is 0 as nulls (TileDB-Py's own call)."""
        values = dict(self._assigned(value, scalars=True))
        for name, validity in nullmaps.items():
            values[name] = np.ma.MaskedArray(np.asarray(values[name]), mask=np.asarray(validity) == 0)
        self[selection] = values

    def write_direct(self, array, **kw):
        """Writes ``array`` (shaped as the array's domain) to the whole
        array."""
        self[...] = array

    def write_subarray(self, subarray, values):
        """Writes ``values`` (an array, or a dict by attribute) into the
        box a :class:`Subarray` gives (one range per dimension)."""
        if subarray._label_ranges:
            raise TileDBError("write_subarray: writing by label ranges is not supported; give index ranges")
        ranges = subarray.ranges()
        if any(len(r) != 1 for r in ranges):
            raise TileDBError("write_subarray: a dense write takes one range per dimension")
        self._write_box([r[0] for r in ranges], values)

    def __setitem__(self, key, value):
        bounds, _ = self._box(key)
        self._write_box(bounds, value)

    def _write_box(self, bounds, value):
        dims = list(self._schema.domain)
        box = [tuple(_native_bound(v, d) for v in b) for d, b in zip(dims, bounds)]
        shape = tuple(extent(lo, hi) for lo, hi in box)
        value, ts = self._split_labels(value, box)
        if isinstance(value, dict) and not value and self._schema.nattr:
            return
        columns = {name: _checked_values(v, self._schema.attr(name), shape)
                   for name, v in self._assigned(value, scalars=True)}
        self._write(pa.table(columns), box, ts)


class SparseArray(Array):
    """A sparse array: ``A[box]`` gives the cells in the box, coordinates
    and attributes by name."""

    @classmethod
    def _sparse_kind(cls):
        return True

    def __getitem__(self, key):
        out = self._read_box(key, None, (self._read_attrs, [d.name for d in self._schema.domain]))
        return self._answer(enumeration_values(self._schema, out), coords=True)

    def _answer(self, out, coords):
        """A ``[...]`` read's fields as TileDB-Py gives them: attributes,
        then dimensions."""
        out = self._masked_nullable(out)
        dims = [k for k in out if self._schema.domain.has_dim(k)]
        return OrderedDict([(k, v) for k, v in out.items() if k not in dims] + [(k, out[k]) for k in dims])

    def _read_box(self, key, query, names):
        attrs, dims = names
        subarray = {}
        for k, d in zip(_normalize_index(key, self.ndim), self._schema.domain):
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise IndexError("steps are not supported for sparse arrays")
                if k.start is None and k.stop is None:
                    continue
            if isinstance(k, (list, np.ndarray, pa.Array)):
                # Coordinates listed: a point range for each.
                points = k.to_pylist() if isinstance(k, pa.Array) else list(np.asarray(k).ravel())
                subarray[d.name] = [(_native_bound(x, d), _native_bound(x, d)) for x in points]
                continue
            (lo, hi), _ = _bounds(k, d)
            subarray[d.name] = [(_native_bound(lo, d), _native_bound(hi, d))]
        return self._read_ranges(subarray, attrs, dims, query)

    def subarray(self, selection, coords=True, attrs=None, cond=None, order=None):
        from .query import Query

        q = Query(self, attrs=attrs, cond=cond, coords=coords, order=order)
        return q[selection]

    def unique_dim_values(self, dim=None):
        """The distinct coordinates written, sorted: of one dimension (by
        name) as a tuple, or of every dimension as an ``OrderedDict``."""
        names = [d.name for d in self._schema.domain]
        if dim is not None and not isinstance(dim, str):
            raise ValueError(f"unique_dim_values takes a dimension's name, not {dim!r}")
        if dim is not None and dim not in names:
            raise ValueError(f"the array has no dimension {dim!r}")
        wanted = names if dim is None else [dim]
        out = self._read_ranges({}, [], wanted, None)
        found = OrderedDict((n, tuple(np.unique(out[n]).tolist())) for n in wanted)
        return found if dim is None else found[dim]

    def __setitem__(self, key, value):
        dims = list(self._schema.domain)
        coords = key if isinstance(key, tuple) else (key,)
        if len(coords) != len(dims):
            raise IndexError("sparse writes take a coordinate array for every dimension")
        columns = {}
        n = None
        for d, c in zip(dims, coords):
            arr = np.asarray(c)
            if arr.ndim == 0:
                arr = arr.reshape(1)
            n = len(arr)
            if d.isvar and any(isinstance(v, bytes) for v in arr):
                # Bytes as given: a coordinate need not be UTF-8.
                columns[d.name] = pa.array([v if isinstance(v, bytes) else str(v).encode() for v in arr],
                                           type=pa.large_binary())
            elif d.isvar:
                columns[d.name] = pa.array([str(v) for v in arr], type=pa.large_string())
            else:
                columns[d.name] = pa.array(np.asarray(arr, dtype=d.dtype).astype(np.int64)
                                           if d.dtype.kind in "mM" else np.asarray(arr, dtype=d.dtype))
        value, ts = self._split_labels(value, [np.asarray(c).ravel() for c in coords])
        for name, v in self._assigned(value, scalars=False):
            values = _checked_values(v, self._schema.attr(name))
            if len(values) != n:
                raise ValueError(f"value length ({len(values)}) does not match coordinate length ({n})")
            columns[name] = values
        self._write(pa.table(columns), None, ts)
