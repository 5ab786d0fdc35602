"""Arrays: ``tessera.open(uri)`` and its reads.

Three ways to select cells, as TileDB-Py users know them:

* ``A.read(attrs, subarray, where, layout)``: a ``pyarrow.Table``, with
  ``subarray`` as ``{"x": (lo, hi)}`` or ``{"x": [(lo, hi), ...]}``
  (inclusive) and ``where`` in the CLI's condition syntax;
* ``A.multi_index[...]`` and ``A.df[...]``: inclusive ranges per
  dimension (scalars, slices, lists of them), giving numpy arrays by field
  or a pandas DataFrame;
* ``A[...]``: half-open slices as in numpy; on dense arrays each attribute
  comes shaped like the box.
"""

import json
import time

import numpy as np
import pyarrow as pa

from . import _native
from ._convert import plain_numbers, storage_pairs
from ._meta import metadata_dict
from ._schema import Schema, numpy_dtype

_DEFAULT_BUDGET = 1 << 30


class FragmentInfo:
    """One fragment, as TileDB-Py's ``FragmentInfo`` describes it."""

    def __init__(self, d):
        self.name = d["name"]
        self.timestamp_range = tuple(d["timestamp_range"])
        self.version = d["version"]
        self.sparse = d["sparse"]
        self.cell_num = d["cell_num"]
        self.nonempty_domain = tuple(tuple(r) for r in d["nonempty_domain"])
        self.array_schema_name = d["schema_name"]
        self.has_consolidated_metadata = d["has_consolidated_metadata"]

    def __repr__(self):
        return f"FragmentInfo({self.name!r}, cells={self.cell_num})"


def _wrap_errors(call):
    """Runs ``call``, turning errors a read raised through pyarrow's stream
    into :class:`TesseraError` with the same message."""
    try:
        return call()
    except _native.TesseraError:
        raise
    except (pa.ArrowException, OSError) as e:
        raise _native.TesseraError(str(e)) from e


class Array:
    """A TileDB array opened at a time (``tessera.open``)."""

    def __init__(self, native, key=None, timestamp=None, storage_options=None):
        self._native = native
        self._key = key
        self._timestamp = timestamp
        self._opened_ms = time.time_ns() // 1_000_000
        self._storage_options = dict(storage_options or {})
        self._schema = None

    def __reduce__(self):
        """Pickles as what opens it again, anywhere (a Dask worker, say):
        ``tessera.open``'s arguments (:meth:`reopen_args`)."""
        return (open, self.reopen_args())

    def reopen_args(self):
        """``(uri, timestamp, key, storage_options)``: what opens this
        array again as it was opened, the timestamp pinned (opened at
        none, as of its open: fragments written later are not seen, those
        it saw are)."""
        if self._timestamp is None:
            # Worked out once: the fragments seen at the open do not change.
            newest = max((f.timestamp_range[1] for f in self.fragments), default=0)
            self._timestamp = (0, max(self._opened_ms, newest))
        return (self.uri, self._timestamp, self._key, dict(self._storage_options))

    # What the array says about itself.

    @property
    def uri(self):
        return self._native.uri

    @property
    def timestamp_range(self):
        return self._native.timestamp_range

    @property
    def schema(self):
        """The schema in force (a :class:`Schema`)."""
        if self._schema is None:
            self._schema = Schema.from_json(self._native.schema_json())
        return self._schema

    @property
    def fragments(self):
        """The visible fragments, in write order."""
        return [FragmentInfo(d) for d in json.loads(self._native.fragments_json())]

    @property
    def meta(self):
        """The array metadata as a dict (TileDB-Py's value shapes), as of
        the open (read once: beside the open on object stores, else when
        first asked for)."""
        return metadata_dict(self._native.metadata())

    def nonempty_domain(self):
        """Per dimension ``(lo, hi)`` of the cells written, or ``None``."""
        ned = json.loads(self._native.nonempty_domain_json())
        if ned is None:
            return None
        return tuple(tuple(_from_json_value(v, d.type) for v in r) for r, d in zip(ned, self.schema.dims))

    # Reads.

    def reader(self, attrs=None, subarray=None, where=None, layout=None, dims=True,
               budget=_DEFAULT_BUDGET, enum_values=False, ascii_as_binary=False):
        """A ``pyarrow.RecordBatchReader`` over the cells, read in batches of
        about ``budget`` bytes: for reads larger than memory."""
        return self._native.reader(attrs=_names(attrs), subarray=self._subarray(subarray),
                                   condition=where, layout=layout, dims=dims, budget=int(budget),
                                   enum_values=enum_values, ascii_as_binary=ascii_as_binary)

    def iter_batches(self, **kwargs):
        """The read's ``pyarrow.RecordBatch``es, one at a time (see :meth:`reader`)."""
        reader = self.reader(**kwargs)
        while True:
            try:
                batch = _wrap_errors(reader.read_next_batch)
            except StopIteration:
                return
            yield batch

    def read(self, attrs=None, subarray=None, where=None, layout=None, dims=True,
             budget=_DEFAULT_BUDGET, enum_values=False, ascii_as_binary=False):
        """The cells as a ``pyarrow.Table``: dimensions (unless ``dims=False``;
        with ``dims=["x"]`` those named, in the schema's order) then
        attributes; enumerated attributes as dictionary columns over
        their stored keys (``enum_values=True``: their values). ASCII
        fields are strings; libtiledb keeps any byte in them, and
        ``ascii_as_binary=True`` gives them as binary, for bytes that are
        not UTF-8 (which strings refuse, naming the field)."""
        reader = self.reader(attrs, subarray, where, layout, dims, budget, enum_values, ascii_as_binary)
        return _wrap_errors(reader.read_all)

    def __arrow_c_stream__(self, requested_schema=None):
        """The whole array as an Arrow C stream (polars, duckdb, pyarrow take it)."""
        return self.reader().__arrow_c_stream__(requested_schema)

    def query(self, attrs=None, cond=None, order=None, dims=True):
        """A TileDB-Py-style query: ``A.query(attrs=["a"], cond="a > 1").df[...]``."""
        return _Query(self, attrs, cond, order, dims)

    @property
    def df(self):
        """``A.df[...]``: inclusive ranges, a pandas DataFrame."""
        return _Query(self).df

    @property
    def multi_index(self):
        """``A.multi_index[...]``: inclusive ranges, numpy arrays by field."""
        return _Query(self).multi_index

    def __getitem__(self, key):
        """Half-open slices, numpy arrays by field (dense: shaped like the box)."""
        return _Query(self)[key]

    def write(self, data, timestamp=None, budget=None, subarray=None, duplicates="refuse"):
        """Writes ``data`` (pyarrow, pandas, a dict of columns, any Arrow
        stream) as a new fragment; returns the fragment names. A dense
        write may give its box as ``subarray`` and only attributes;
        ``duplicates`` says what becomes of cells twice at one coordinate
        (see :func:`tessera.write`)."""
        from ._write import write

        return write(self.uri, data, timestamp=timestamp, key=self._key, budget=budget, subarray=subarray,
                     duplicates=duplicates)

    # Pictures.

    def view(self, attr=None, subarray=None, dims=None, budget=64 << 20, pixels=400):
        """A page of pictures (:class:`View`, as ``tessera view`` writes):
        the schema, the fragments on a timeline and over the domain, the
        tile grid shaded by bytes, and for a dense array ``attr`` over a
        2-D slice (for a sparse one, the density of its cells). ``dims``
        names the one or two dimensions drawn; ``subarray`` (as for
        :meth:`read`) narrows the pictures; cells are read in batches of
        ``budget`` bytes into at most ``pixels`` a side. Jupyter shows the
        page inline."""
        from ._view import View, view_options

        return View(*self._native.view(view_options(attr, self._subarray(subarray), dims, budget, pixels)))

    # Context manager, as TileDB-Py's arrays.

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"tessera.Array({self.uri!r}, {self.schema!r})"

    def _subarray(self, subarray):
        """Bounds as the native layer takes them (datetimes as integers)."""
        if subarray is None:
            return None
        dims = self.schema.dims
        if isinstance(subarray, dict):
            items = list(subarray.items())
        else:
            items = [(d.name, r) for d, r in zip(dims, subarray)]
        out = {}
        for name, ranges in items:
            if ranges is None:
                continue
            d = next((d for d in dims if d.name == name), None)
            pairs = [ranges] if _is_pair(ranges) else list(ranges)
            # A name the array lacks goes on as given: the read names it in its error.
            out[name] = [tuple(_bound(v, d) for v in p) if d else p for p in pairs]
        return out


def open(uri, timestamp=None, key=None, storage_options=None):
    """Opens the array at ``uri`` (a path, or ``s3://``, ``gs://``,
    ``az://``, ``http(s)://``) at ``timestamp`` (milliseconds, or a
    ``(start, end)`` window), with ``key`` (64 hex digits) if encrypted.
    ``storage_options`` configures an object store over the environment:
    the ``object_store`` crate's keys (``{"aws_endpoint":
    "http://localhost:9000", "aws_region": "eu-west-1"}``)."""
    native = _native.open_array(str(uri), timestamp, key, storage_pairs(storage_options))
    return Array(native, key=key, timestamp=timestamp, storage_options=storage_options)


def _names(attrs):
    if attrs is None:
        return None
    if isinstance(attrs, str):
        return [attrs]
    return list(attrs)


def _is_pair(v):
    return isinstance(v, (tuple, list)) and len(v) == 2 and not any(isinstance(x, (tuple, list)) for x in v)


def _bound(v, dim):
    """A bound as an int, float, str or bytes fitting the dimension."""
    if isinstance(v, np.datetime64):
        return int(v.astype(numpy_dtype(dim.type)).astype(np.int64))
    if isinstance(v, np.generic):
        return v.item()
    return v


def _from_json_value(v, type_name):
    if isinstance(v, str) and type_name.startswith("FLOAT"):
        return float(v.replace("NaN", "nan"))
    return v


class _Query:
    """The selection a query fixes (attributes, condition, order), indexed
    as TileDB-Py indexes: ``.df[...]``, ``.multi_index[...]``, ``[...]``."""

    def __init__(self, array, attrs=None, cond=None, order=None, dims=True):
        self.array, self.attrs, self.cond, self.dims = array, attrs, cond, dims
        self.order = order

    @property
    def df(self):
        return _Indexer(self, inclusive=True, result="pandas")

    @property
    def multi_index(self):
        return _Indexer(self, inclusive=True, result="numpy")

    def __getitem__(self, key):
        return _Indexer(self, inclusive=False, result="numpy")[key]

    def table(self, subarray, layout=None, dims=None):
        return self.array.read(attrs=self.attrs, subarray=subarray, where=self.cond,
                               layout=self.order or layout, dims=self.dims if dims is None else dims)


class _Indexer:
    def __init__(self, query, inclusive, result):
        self.query, self.inclusive, self.result = query, inclusive, result

    def __getitem__(self, key):
        schema = self.query.array.schema
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > schema.ndim:
            raise IndexError(f"{len(key)} indices for {schema.ndim} dimensions")
        subarray = {}
        box = []
        for d, k in zip(schema.dims, key + (slice(None),) * (schema.ndim - len(key))):
            ranges = _ranges(k, d, self.inclusive)
            if ranges is not None:
                subarray[d.name] = ranges
            box.append(ranges)
        # Dense half-open reads give each attribute shaped like the box
        # (and, as TileDB-Py's, no coordinates).
        shaped = not schema.sparse and not self.inclusive
        layout = "row-major" if shaped else None
        table = self.query.table(subarray or None, layout, dims=False if shaped else None)
        if self.result == "pandas":
            return _signed_dictionaries(table).to_pandas()
        out = {f.name: _numpy(table.column(f.name), f) for f in table.schema}
        if shaped:
            shape = _box_shape(schema, box)
            if shape is not None and all(len(v) == np.prod(shape) for v in out.values()):
                out = {k: v.reshape(shape) for k, v in out.items()}
        return out


def _ranges(k, dim, inclusive):
    """The inclusive ranges an index names on one dimension (None: all)."""
    if isinstance(k, slice):
        if k.step not in (None, 1):
            raise IndexError("slices with a step are not supported")
        if k.start is None and k.stop is None:
            return None
        lo, hi = k.start, k.stop
        if lo is None or hi is None:
            full = dim.domain
            if full is None:
                raise IndexError(f"`{dim.name}`: open-ended slices of a string dimension")
            lo = full[0] if lo is None else lo
            if hi is None:
                hi = full[1]
            elif not inclusive:
                hi = _before(hi, dim)
        elif not inclusive:
            hi = _before(hi, dim)
        return [(lo, hi)]
    if isinstance(k, list):
        out = []
        for x in k:
            r = _ranges(x, dim, inclusive)
            if r is None:
                return None
            out.extend(r)
        return out
    return [(k, k)]


def _before(hi, dim):
    """The last coordinate before ``hi`` (half-open slices)."""
    if isinstance(hi, np.datetime64):
        return hi - np.timedelta64(1, np.datetime_data(hi.dtype)[0])
    if isinstance(hi, (float, np.floating)) or dim.type.startswith("FLOAT"):
        return float(np.nextafter(hi, -np.inf))
    return hi - 1


def _box_shape(schema, box):
    shape = []
    for d, ranges in zip(schema.dims, box):
        if ranges is None:
            lo, hi = d.domain
        elif len(ranges) == 1:
            lo, hi = (_bound(v, d) for v in ranges[0])
        else:
            return None
        shape.append(int(hi) - int(lo) + 1)
    return tuple(shape)


def _signed_dictionaries(table):
    """Dictionary columns with unsigned keys given signed keys wide enough
    (pandas takes only signed category codes)."""
    wider = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(), pa.uint64(): pa.int64()}
    for i, field in enumerate(table.schema):
        t = field.type
        if pa.types.is_dictionary(t) and t.index_type in wider:
            chunks = [pa.DictionaryArray.from_arrays(c.indices.cast(wider[t.index_type]), c.dictionary)
                      for c in table.column(i).chunks]
            column = pa.chunked_array(chunks, type=pa.dictionary(wider[t.index_type], t.value_type))
            table = table.set_column(i, field.with_type(column.type), column)
    return table


def _numpy(column, field):
    """A column as numpy: TileDB-Py's dtypes (STRING_ASCII cells as bytes,
    nullable fields as masked arrays)."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if (field.metadata or {}).get(b"tiledb.datatype") == b"STRING_ASCII":
        values = [None if v is None else v.encode() for v in column.to_pylist()]
        data = np.array([b"" if v is None else v for v in values], dtype=object)
        return np.ma.MaskedArray(data, mask=[v is None for v in values]) if column.null_count else data
    plain = plain_numbers(column)
    if plain is not None:
        return plain
    if column.null_count:
        mask = column.is_null().to_numpy(zero_copy_only=False)
        data = column.fill_null(_zero(column.type)).to_numpy(zero_copy_only=False)
        return np.ma.MaskedArray(data, mask=mask)
    return column.to_numpy(zero_copy_only=False)


def _zero(t):
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ""
    if pa.types.is_binary(t):
        return b""
    if pa.types.is_boolean(t):
        return False
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return None
    return pa.scalar(0, type=t) if not pa.types.is_timestamp(t) else pa.scalar(0, type=pa.int64()).cast(t)
