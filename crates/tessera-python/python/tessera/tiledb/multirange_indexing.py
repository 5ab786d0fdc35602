"""``A.multi_index[...]`` and ``A.df[...]``: inclusive ranges per
dimension (a scalar, a slice without a step, a ``(lo, hi)`` pair, or a
list of them; :class:`EmptyRange` for none), the cells of every
combination; and TileDB-Py's helpers over such ranges."""

import json
from collections import OrderedDict

import numpy as np

from ._values import extent, native_bound
from . import stats
from ._buffers import arrow_text
from .label_query import label_data, label_ranges_of
from .libtiledb import TileDBError

# The dimension of a data frame's row numbers (TileDB-Py's name).
ROWS = "__tiledb_rows"


class EmptyRange:
    """An empty selection on a dimension (``A.multi_index[EmptyRange]``)."""


def mr_dense_result_shape(ranges, base_shape=None):
    """The shape of a dense result over ``ranges`` (per dimension, a
    sequence of inclusive ``(lo, hi)``; empty: the whole of
    ``base_shape``'s extent)."""
    shape = []
    for i, subranges in enumerate(ranges):
        if isinstance(subranges, np.ndarray):
            shape.append(np.uint64(len(subranges)))
        elif subranges not in (None, ()):
            shape.append(np.uint64(sum(abs(hi - lo) + 1 for lo, hi in subranges)))
        elif base_shape is not None:
            shape.append(base_shape[i])
        else:
            raise ValueError("Missing required base_shape for whole-dimension slices")
    return tuple(shape)


def getitem_ranges(array, idx):
    """Per dimension, the inclusive ranges ``idx`` selects: ``()`` for a
    whole dimension, open slice ends taken from the non-empty domain."""
    ndim = array.schema.domain.ndim
    ranges = [()] * ndim
    ned = array.nonempty_domain() or [None] * ndim
    for i, sel in enumerate(idx if isinstance(idx, tuple) else [idx]):
        ranges[i] = _selection_ranges(sel, ned[i])
    return tuple(ranges)


def _selection_ranges(sel, ned):
    if isinstance(sel, slice):
        if sel.step is not None:
            raise ValueError("Stepped slice ranges are not supported")
        if sel.start is None and sel.stop is None:
            return ()
        lo = sel.start if sel.start is not None else (ned[0] if ned else None)
        hi = sel.stop if sel.stop is not None else (ned[1] if ned else None)
        if lo is None or hi is None:
            raise TileDBError("open-ended slices of an empty dimension")
        return ((lo, hi),)
    if isinstance(sel, tuple) and len(sel) == 2 and not any(isinstance(x, (slice, list)) for x in sel):
        return (tuple(sel),)
    if isinstance(sel, (list, np.ndarray)):
        out = []
        for x in sel:
            out.extend(_selection_ranges(x, ned))
        return tuple(out)
    return ((sel, sel),)


class MultiRangeIndexer:
    """``[...]`` with inclusive ranges per dimension: a scalar, a slice
    (no step), or a list of them; the cells of every combination."""

    def __init__(self, array, query):
        self.array = array
        self.query = query

    def _subarray(self, key):
        schema = self.array.schema
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > schema.ndim:
            raise IndexError(f"too many indices: {len(key)} for {schema.ndim} dimensions")
        subarray, shape, empty = {}, [], False
        # A dense array's whole dimension is its non-empty domain there, as
        # TileDB-Py reads it (the domain may be far larger than the data);
        # a dimension the key leaves out is read over its whole domain.
        ned = None if schema.sparse else self.array.nonempty_domain()
        for i, (d, k) in enumerate(zip(schema.domain, key + (slice(None),) * (schema.ndim - len(key)))):
            ranges = _ranges(k, d)
            if ranges is None and ned is not None and i < len(key):
                ranges = [tuple(native_bound(v, d) for v in ned[i])]
            if ranges == []:
                empty = True
            if ranges is None:
                lo, hi = d.domain
                shape.append(None if d.isvar else extent(lo, hi))
                continue
            subarray[d.name] = ranges
            # Ranges of a dense array's dimension are placed one after
            # another along it, in the order given.
            if (len(ranges) == 1 or not schema.sparse) and not d.isvar and d.dtype.kind in "iumM":
                shape.append(sum(extent(*r) for r in ranges))
            else:
                shape.append(None)
        return subarray, shape, empty

    def _result(self, key, with_coords):
        a = self.array
        subarray, shape, empty = self._subarray(key)
        attrs, dims = self.query._names(with_coords or a.schema.sparse)
        if self.query.return_incomplete:
            return ResultChunks(self, None if empty else subarray, attrs, dims)
        if empty:
            return _empty_result(a, attrs, dims)
        domain = list(a.schema.domain)
        per_dim = [subarray.get(d.name) or ([tuple(d.domain)] if not d.isvar else None) for d in domain]
        combos = int(np.prod([len(r) for r in per_dim if r])) if all(per_dim) else 0
        if 1 < combos <= 256 and self.query.cond is None and a.schema.sparse:
            # Several ranges: read in the order given, as libtiledb answers.
            return a._read_combinations(per_dim, attrs, dims, self.query)
        return a._read_ranges(subarray, attrs, dims, self.query, shape)

    def __getitem__(self, key):
        if self.query.return_arrow:
            raise TileDBError("`return_arrow=True` requires .df indexer")
        with stats.timer("py.getitem_time", self.query._stats):
            out = self._result(key, False)
            return out if isinstance(out, ResultChunks) else self._shaped(out)

    def _shaped(self, fields):
        """One result as this indexer gives it: enumerated attributes as
        their enumeration's values."""
        return enumeration_values(self.array.schema, fields)


class LabelIndexer(MultiRangeIndexer):
    """``A.label_index(labels)[...]``: dimensions with one of ``labels``
    are selected by ranges of labels (a slice with both ends, a ``(lo,
    hi)``, a label, a list of labels); the result holds those labels."""

    def __init__(self, array, labels, query):
        if array.schema.sparse:
            raise NotImplementedError("querying sparse arrays by label is not yet implemented")
        super().__init__(array, query)
        self._labels = {}
        for name in labels:
            dim = array.schema.dim_label(name).dim_index
            if dim in self._labels:
                raise TileDBError(f"cannot set labels `{self._labels[dim]}` and `{name}` defined on the same "
                                  "dimension")
            self._labels[dim] = name

    def _result(self, key, with_coords):
        key = key if isinstance(key, tuple) else (key,)
        key = key + (slice(None),) * (self.array.schema.ndim - len(key))
        found, labels, cache = list(key), OrderedDict(), {}
        for dim, name in self._labels.items():
            data = label_data(self.array, name, cache)
            ranges = [data.index_range(lo, hi) for lo, hi in label_ranges_of(key[dim])]
            found[dim] = ranges if len(ranges) > 1 else slice(*ranges[0])
            labels[name] = data.labels_at(ranges)
        out = super()._result(tuple(found), with_coords)
        for name, values in labels.items():
            out[name] = values
        return out


class DataFrameIndexer(MultiRangeIndexer):
    """As :class:`MultiRangeIndexer`, giving a pandas DataFrame; the
    dimensions are columns where the query returns them."""

    def __getitem__(self, key):
        schema = self.array.schema
        attrs, _ = self.query._names(True)
        if self.query.use_arrow and any(_multi_value(schema, a) for a in attrs):
            # TileDB-Py's Arrow path takes one value a cell.
            raise TileDBError("Multi-value attributes are not currently supported when use_arrow=True. This "
                              "includes all variable-length attributes and fixed-length attributes with more "
                              "than one value. Use `query(use_arrow=False)`.")
        with stats.timer("py.getitem_time", self.query._stats):
            if self.query.return_arrow and not self.query.return_incomplete:
                return self._arrow_table(key)
            # Coordinates as the query says (a sparse array's by default).
            out = self._result(key, False)
            return out if isinstance(out, ResultChunks) else self._shaped(out)

    def _arrow_table(self, key):
        """``return_arrow``: the cells as one Arrow table, as read."""
        import pyarrow as pa

        a = self.array
        subarray, _, empty = self._subarray(key)
        attrs, dims = self.query._names(a.schema.sparse)
        if empty:
            fields = _empty_result(a, attrs, dims)
            return pa.table({k: pa.array(v) for k, v in fields.items()})
        table = a._table(subarray or None, attrs, dims, a._layout(self.query), self.query._cond_text())
        return arrow_text(table.select(dims + attrs))

    def _shaped(self, fields):
        import pandas as pd

        schema = self.array.schema
        # TileDB-Py makes its frames through Arrow (ASCII as str, fixed-size
        # bytes whole) unless told not to or an attribute is multi-value.
        arrow = self.query.use_arrow is not False and not any(_multi_value(schema, k) for k in fields)
        columns = {}
        for k, v in fields.items():
            label = schema.attr(k).enum_label if schema.has_attr(k) else None
            if label is None:
                columns[k] = _column(_text(v) if arrow and _is_ascii(schema, k) else v, whole_bytes=arrow)
                continue
            # Keys over their enumeration's values: a categorical column.
            e = schema.enum(label)
            codes = np.ma.getdata(v).ravel().astype(np.int64)
            invalid = (codes < 0) | (codes >= len(e.values())) | np.ma.getmaskarray(v).ravel()
            columns[k] = pd.Categorical.from_codes(np.where(invalid, -1, codes), categories=e.values(),
                                                   ordered=e.ordered)
        frame = pd.DataFrame(columns)
        with stats.timer("py.getitem_time.pandas_index_update_time"):
            return update_from_meta(frame, self.array.meta, self.query.index_col)


def _multi_value(schema, name):
    """Whether field ``name`` is an attribute of several values a cell
    (text aside), which TileDB-Py's Arrow frames do not take."""
    return schema.has_attr(name) and schema.attr(name).ncells != 1 and schema.attr(name).dtype.kind not in "SU"


def _is_ascii(schema, name):
    """Whether field ``name`` is ASCII text (an attribute or a dimension),
    which TileDB-Py's data frames give as ``str``."""
    if schema.has_attr(name):
        return schema.attr(name).isascii
    return schema.domain.has_dim(name) and schema.domain.dim(name).dtype.kind == "S"


def _text(values):
    """Bytes as ``str`` (UTF-8; bytes that are not stay bytes), nulls kept."""
    def decoded(x):
        try:
            return x.decode() if isinstance(x, bytes) else x
        except UnicodeDecodeError:
            return x

    out = np.empty(np.shape(values), dtype=object)
    out.ravel()[:] = [decoded(x) for x in np.ma.getdata(values).ravel()]
    return np.ma.MaskedArray(out, mask=np.ma.getmaskarray(values)) if isinstance(values, np.ma.MaskedArray) else out


def _column(values, whole_bytes=False):
    """A field's values as a pandas column: nullable integers and booleans
    as pandas' masked arrays, other nulls as NaN or None; with
    ``whole_bytes``, fixed-size bytes keep their trailing zero bytes."""
    import pandas as pd

    if isinstance(values, np.ma.MaskedArray):
        data, mask = np.ma.getdata(values).ravel(), np.ma.getmaskarray(values).ravel()
        if data.dtype.kind in "iu":
            return pd.arrays.IntegerArray(data, mask)
        if data.dtype.kind == "b":
            return pd.arrays.BooleanArray(data, mask)
        if data.dtype.kind == "f":
            return np.where(mask, np.nan, data)
        out = data.astype(object)
        out[mask] = None
        return out
    if whole_bytes and isinstance(values, np.ndarray) and values.dtype.kind == "S" and values.dtype.itemsize:
        # Fixed-size bytes whole, trailing zero bytes too (numpy drops them).
        n, raw = values.dtype.itemsize, np.ascontiguousarray(values).tobytes()
        out = np.empty(values.size, dtype=object)
        out[:] = [raw[i:i + n] for i in range(0, len(raw), n)]
        return out
    return values.ravel() if isinstance(values, np.ndarray) else values


def enumeration_values(schema, fields):
    """``fields`` with each enumerated attribute's keys replaced by the
    values they index (kept as keys where one indexes none: a dense cell
    left out)."""
    for name, keys in list(fields.items()):
        label = schema.attr(name).enum_label if schema.has_attr(name) else None
        if label is None:
            continue
        values = np.asarray(schema.enum(label).values())
        data = np.ma.getdata(keys)
        if data.size and (data.min() < 0 or data.max() >= len(values)):
            continue
        mapped = values[data.astype(np.int64)]
        fields[name] = np.ma.MaskedArray(mapped, mask=np.ma.getmaskarray(keys)) \
            if isinstance(keys, np.ma.MaskedArray) else mapped
    return fields


class EstimatedResultSize:
    """The bytes a field's result takes: its offsets and its data."""

    def __init__(self, offsets_bytes, data_bytes):
        self.offsets_bytes = offsets_bytes
        self.data_bytes = data_bytes

    def __repr__(self):
        return f"EstimatedResultSize(offsets_bytes={self.offsets_bytes}, data_bytes={self.data_bytes})"


class ResultChunks:
    """A read with ``return_incomplete=True`` (sparse arrays): iterating
    gives the result in parts of about ``py.init_buffer_bytes`` each, as
    the indexer gives a whole result (or Arrow tables, with
    ``return_arrow``)."""

    def __init__(self, indexer, subarray, attrs, dims):
        array = indexer.array
        if not array.schema.sparse:
            raise TileDBError("return_incomplete: incomplete reads are given for sparse arrays only")
        self._indexer, self._subarray, self._attrs, self._dims = indexer, subarray, attrs, dims

    def _batches(self, budget):
        array, query = self._indexer.array, self._indexer.query
        if self._subarray is None:
            return
        reader = array._reader(self._subarray or None, self._attrs, list(self._dims), array._layout(query),
                               query._cond_text(), budget)
        yield from reader

    def estimated_result_sizes(self):
        """Per field, the bytes of the whole result: tessera counts them
        exactly, by reading the cells (offsets: 8 bytes a cell of a
        variable-length field)."""
        import pyarrow as pa

        sizes = {name: [0, 0] for name in self._dims + self._attrs}
        for batch in self._batches(1 << 30):
            for name in sizes:
                column = batch.column(name)
                if pa.types.is_dictionary(column.type):
                    column = column.indices
                if pa.types.is_string(column.type) or pa.types.is_binary(column.type) or \
                        pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type):
                    sizes[name][0] += 8 * len(column)
                    sizes[name][1] += int(pa.compute.sum(pa.compute.binary_length(column)).as_py() or 0)
                else:
                    sizes[name][1] += column.nbytes - (len(column) + 7) // 8 * (column.null_count > 0)
        return {name: EstimatedResultSize(o, d) for name, (o, d) in sizes.items()}

    def __iter__(self):
        import pyarrow as pa

        array, indexer = self._indexer.array, self._indexer
        budget = int(array.ctx.config().get("py.init_buffer_bytes", False) or 10 * 1024 * 1024)
        produced = False
        for batch in self._batches(budget):
            produced = True
            if indexer.query.return_arrow:
                yield arrow_text(pa.Table.from_batches([batch]).select(self._dims + self._attrs))
            else:
                yield indexer._shaped(array._fields(batch, self._attrs, self._dims))
        if not produced:
            yield indexer._shaped(_empty_result(array, self._attrs, self._dims))


def _ranges(k, dim):
    """Inclusive native ranges for one dimension's index (None: all)."""
    if k is EmptyRange or (isinstance(k, list) and not k):
        return []
    if isinstance(k, slice):
        if k.step not in (None, 1):
            raise ValueError("Stepped slice ranges are not supported")
        if k.start is None and k.stop is None:
            return None
        lo, hi = dim.domain
        if dim.isvar and (k.start is None or k.stop is None):
            raise TileDBError(f"{dim.name}: open-ended ranges of a string dimension")
        lo = lo if k.start is None else k.start
        hi = hi if k.stop is None else k.stop
        return [(native_bound(lo, dim), native_bound(hi, dim))]
    if isinstance(k, tuple) and len(k) == 2:
        return [(native_bound(k[0], dim), native_bound(k[1], dim))]
    if isinstance(k, (list, np.ndarray)):
        out = []
        for x in k:
            r = _ranges(x, dim)
            if r is None:
                return None
            out.extend(r)
        return out
    return [(native_bound(k, dim), native_bound(k, dim))]


def _empty_result(array, attrs, dims):
    schema = array.schema
    out = OrderedDict()
    for name in dims:
        out[name] = np.array([], dtype=schema.domain.dim(name).dtype)
    for name in attrs:
        dtype = schema.attr(name).dtype
        out[name] = np.array([], dtype=object if schema.attr(name).isvar else dtype)
    return out


def update_from_meta(df, meta, index_col=True):
    """``df`` with the pandas types and index ``from_pandas`` stored."""
    types = {}
    if "__pandas_attribute_repr" in meta:
        types.update({k: v for k, v in json.loads(meta["__pandas_attribute_repr"]).items() if k in df})
    index = []
    if "__pandas_index_dims" in meta:
        dims = json.loads(meta["__pandas_index_dims"])
        index = [k for k in dims if k in df]
        types.update({k: v for k, v in dims.items() if k in df})
    if types:
        df = df.astype(types, copy=False)
    if index_col is True and index:
        df = df.set_index(index)
        if ROWS in index:
            names = [None if n == ROWS else n for n in index]
            df.index = df.index.rename(names if len(names) > 1 else names[0])
    elif index_col not in (True, False, None):
        df = df.set_index(index_col)
    return df
