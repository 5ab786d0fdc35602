"""Dask collections over TileDB arrays, read by tessera on the workers.

    >>> import tessera.dask
    >>> X = tessera.dask.array("testdata/tiledb-0.36.1/dense_large/array")
    >>> X.chunks[0][:2]                       # the array's space tiles
    (32, 32)
    >>> float(X.sum().compute()) == float(tessera.open("testdata/tiledb-0.36.1/dense_large/array")[:]["v"].sum())
    True
    >>> df = tessera.dask.dataframe("testdata/tiledb-0.36.1/sparse_2d/array", npartitions=2)
    >>> len(df.compute()) == len(tessera.open("testdata/tiledb-0.36.1/sparse_2d/array").read())
    True

Partitions are planned on the client from metadata alone (the schema for
a dense array, the fragments' R-trees for a sparse one: no cell is read
there), cut where the array's tiles end, so each task reads only its own
tiles. A task carries what opens the array again (URI, timestamp, key,
storage options), never an open handle: the collections run on a
``dask.distributed`` cluster of separate processes or machines, on local
paths they all see or on object stores. The array is read as of the
moment the collection is made: fragments written after it are not seen
by its tasks. Dask is an optional dependency (``pip install
"dask[dataframe]"``).
"""

import math

import numpy as np
import pyarrow as pa

from ._array import _names, _numpy
from ._array import open as _open_array
from ._native import TesseraError

__all__ = ["ArraySource", "array", "dataframe", "to_pandas"]

# Cells a dataframe partition holds, about, when npartitions is not given.
_CELLS_PER_PARTITION = 1 << 20
_MOST_PARTITIONS = 1024


class ArraySource:
    """What opens an array again, anywhere: its URI, the timestamp it is
    read at, its key and storage options. Pickles as those."""

    def __init__(self, uri, timestamp, key=None, storage_options=None):
        self.uri, self.timestamp = str(uri), timestamp
        self.key, self.storage_options = key, dict(storage_options or {})

    @classmethod
    def opened(cls, uri, timestamp=None, key=None, storage_options=None):
        """The array opened here, and its source with the timestamp pinned
        (:meth:`tessera.Array.reopen_args`): tasks that run later see the
        fragments the plan saw."""
        opened = _open_array(uri, timestamp=timestamp, key=key, storage_options=storage_options)
        return opened, cls(*opened.reopen_args())

    def __dask_tokenize__(self):
        return (self.uri, repr(self.timestamp), self.key, sorted(self.storage_options.items()))

    def open(self):
        return _open_array(self.uri, timestamp=self.timestamp, key=self.key,
                           storage_options=self.storage_options)

    def __repr__(self):
        return f"ArraySource({self.uri!r}, timestamp={self.timestamp!r})"


def array(uri, attr=None, chunks=None, *, timestamp=None, key=None, storage_options=None):
    """A dense array's attribute ``attr`` (the only one where it has one)
    as a ``dask.array.Array`` over the array's domain, indexed from 0 as
    TileDB-Py's ``dask.array.from_tiledb`` indexes it. ``chunks`` as dask
    takes them (default: the space tiles, so a block reads its tiles
    alone); ``timestamp``, ``key`` and ``storage_options`` as for
    :func:`tessera.open`."""
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    opened, source = ArraySource.opened(uri, timestamp, key, storage_options)
    schema = opened.schema
    if schema.sparse:
        raise TesseraError(f"{source.uri}: a sparse array has no dask array; use tessera.dask.dataframe")
    field = _one_attribute(schema, attr, source.uri)
    if field.var or (field.ncells or 1) != 1:
        raise TesseraError(f"{source.uri}: attribute `{field.name}` holds more than one value a cell")
    shape = tuple(int(d.domain[1]) - int(d.domain[0]) + 1 for d in schema.dims)
    if chunks is None:
        chunks = tuple(min(int(d.tile or n), n) for d, n in zip(schema.dims, shape))
    arrow_field = pa.schema(opened._native.arrow_schema()).field(field.name)
    # The dtype blocks have: that of an empty column made as theirs are.
    dtype = _block_values(pa.array([], type=arrow_field.type), arrow_field, field.nullable).dtype
    chunks = da.core.normalize_chunks(chunks, shape, dtype=dtype)
    name = "tessera-array-" + tokenize(source, field.name, chunks)
    starts = [np.cumsum((0,) + c[:-1]) for c in chunks]
    graph = {}
    for index in np.ndindex(*[len(c) for c in chunks]):
        box = tuple(
            (int(d.domain[0]) + int(s[i]), int(d.domain[0]) + int(s[i]) + c[i] - 1)
            for d, s, c, i in zip(schema.dims, starts, chunks, index)
        )
        graph[(name,) + index] = (_dense_block, source, field.name, field.nullable, box)
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=())
    empty = np.empty((0,) * len(shape), dtype=dtype)
    meta = np.ma.masked_array(empty) if field.nullable else empty
    return da.Array(hlg, name, chunks, dtype=dtype, meta=meta)


def _one_attribute(schema, attr, uri):
    if attr is not None:
        if not schema.has_attr(attr):
            names = ", ".join(a.name for a in schema.attrs)
            raise TesseraError(f"{uri}: the array has no attribute `{attr}` (it has {names})")
        return schema.attr(attr)
    if len(schema.attrs) != 1:
        names = ", ".join(a.name for a in schema.attrs)
        raise TesseraError(f"{uri}: name the attribute to read, one of {names}")
    return schema.attrs[0]


def _dense_block(source, attr, nullable, box):
    """One block of :func:`array`: the cells of ``box`` (inclusive, per
    dimension), shaped as the box, as TileDB-Py gives them (a nullable
    attribute as a masked array, an enumerated one as its values)."""
    opened = source.open()
    table = opened.read(attrs=[attr], subarray=dict(zip((d.name for d in opened.schema.dims), box)),
                        layout="row-major", dims=False)
    values = _block_values(table.column(attr), table.schema.field(attr), nullable)
    return values.reshape(tuple(hi - lo + 1 for lo, hi in box))


def _block_values(column, field, nullable):
    values = _numpy(column, field)
    if not nullable:
        return values
    # Every block of a nullable attribute masked, nulls or not, with a fill
    # value its dtype holds (numpy's default for integers, 999999, does
    # not fit 8 and 16 bits, and such a block would not travel between
    # processes).
    values = values if np.ma.isMaskedArray(values) else np.ma.masked_array(values)
    if values.dtype.kind in "iu" and values.dtype.itemsize < 4:
        values.fill_value = np.iinfo(values.dtype).max
    return values


def dataframe(uri, attrs=None, where=None, *, subarray=None, dims=True, npartitions=None,
              enum_values=False, timestamp=None, key=None, storage_options=None):
    """Any array's cells as a ``dask.dataframe.DataFrame``: dimensions
    (unless ``dims=False``) then ``attrs`` (default all), the cells of
    ``subarray`` (as :meth:`tessera.Array.read` takes it) matching
    ``where`` (a condition as ``Array.read`` takes it). Up to
    ``npartitions`` partitions (default: about a million cells each), cut
    on the first dimension where the tiles end; each is read on a worker
    as ``Array.read`` reads it, so partitions side by side give the cells
    one read gives."""
    import dask.dataframe as dd

    opened, source = ArraySource.opened(uri, timestamp, key, storage_options)
    native_subarray = opened._subarray(subarray)
    if npartitions is None:
        npartitions = _partitions_for(opened)
    # Planning parses `where`: an ill-formed condition fails here, named.
    pieces = opened._native.partitions(native_subarray, int(npartitions), where)
    meta = _empty_frame(opened, attrs, dims, enum_values)
    read = _ReadPart(source, attrs, where, dims, enum_values)
    if not pieces:
        return dd.from_pandas(meta, npartitions=1)
    return dd.from_map(read, [_as_subarray(p) for p in pieces], meta=meta, enforce_metadata=False)


def _partitions_for(opened):
    """About a million cells a partition, by the fragments' cell counts
    (a dense array's by its domain's cells)."""
    if opened.schema.sparse:
        cells = sum(f.cell_num for f in opened.fragments)
    else:
        cells = math.prod(int(d.domain[1]) - int(d.domain[0]) + 1 for d in opened.schema.dims)
    return max(1, min(_MOST_PARTITIONS, -(-cells // _CELLS_PER_PARTITION)))


def _as_subarray(piece):
    """A partition's ranges, ``(dim, lo, hi)`` each, as a subarray dict."""
    out = {}
    for name, lo, hi in piece:
        out.setdefault(name, []).append((lo, hi))
    return out


def _empty_frame(opened, attrs, dims, enum_values):
    """The frame every partition's columns and dtypes follow, from the
    schema alone (no cell read): a read's fields, converted as a
    partition's are."""
    from dask.dataframe.utils import clear_known_categories

    whole = pa.schema(opened._native.arrow_schema())
    names = [d.name for d in opened.schema.dims] if dims else []
    names += [a.name for a in opened.schema.attrs] if attrs is None else _names(attrs)
    fields = []
    for name in names:
        field = whole.field(name)
        if enum_values and pa.types.is_dictionary(field.type):
            # Enumerated attributes read as their values.
            field = field.with_type(field.type.value_type)
        fields.append(field)
    # Categories come with the cells: unknown until a partition is read.
    return clear_known_categories(to_pandas(pa.schema(fields).empty_table()))


def to_pandas(table):
    """A ``pyarrow.Table`` read from an array as a dataframe partition is
    made of it: as ``Array.df[...]`` converts it (enumerated attributes as
    categoricals, strings as objects), but with dtypes that do not depend
    on the cells a partition holds and that Dask keeps: list and binary
    columns (a multi-value attribute's fixed-size lists as lists) and
    nullable integers and booleans as pandas' Arrow dtypes (not floats,
    and only where a partition has a null)."""
    import pandas as pd

    from ._array import _signed_dictionaries

    table = _signed_dictionaries(table)
    kept = {}
    for i, field in enumerate(table.schema):
        t = field.type
        if pa.types.is_fixed_size_list(t):
            t = pa.list_(t.value_field)
        nested = pa.types.is_list(t) or pa.types.is_large_list(t)
        binary = pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
        nullable = field.nullable and (pa.types.is_integer(t) or pa.types.is_boolean(t))
        if nested or binary or nullable:
            kept[field.name] = pd.Series(pd.arrays.ArrowExtensionArray(table.column(i).cast(t)))
    frame = table.drop_columns(list(kept)).to_pandas()
    for name, series in kept.items():
        frame[name] = series
    return frame[table.column_names]


class _ReadPart:
    """Reads one partition of :func:`dataframe` on a worker."""

    def __init__(self, source, attrs, where, dims, enum_values):
        self.source, self.attrs, self.where = source, attrs, where
        self.dims, self.enum_values = dims, enum_values

    def __call__(self, subarray):
        opened = self.source.open()
        return to_pandas(opened.read(attrs=self.attrs, subarray=subarray, where=self.where,
                                      dims=self.dims, enum_values=self.enum_values))
