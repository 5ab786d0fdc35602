"""pandas data frames as TileDB arrays, as TileDB-Py's ``from_pandas``,
``from_csv`` and ``open_dataframe`` store and read them: columns as
attributes (or dimensions, ``index_dims``), the index as dimensions
(``__tiledb_rows`` for a plain row number), and the pandas types kept in
the metadata keys TileDB-Py reads back (``__pandas_attribute_repr``,
``__pandas_index_dims``)."""

import json
from dataclasses import dataclass

import numpy as np

from .array import Array, DenseArray, SparseArray
from .array_schema import ArraySchema
from .attribute import Attr
from .dimension import Dim
from .domain import Domain
from .filter import FilterList, ZstdFilter
from .libtiledb import TileDBError
from .multirange_indexing import ROWS

_NULLABLE_INTS = {f"{p}Int{n}": np.dtype(f"{p.lower()}int{n}") for p in ("", "U") for n in (8, 16, 32, 64)}


@dataclass(frozen=True)
class ColumnInfo:
    """How a column is stored: numpy ``dtype``, the pandas type to give it
    back as (``repr``), whether it holds nulls, whether it is var-sized."""

    dtype: np.dtype
    repr: str = None
    nullable: bool = False
    var: bool = False
    enumeration: bool = False

    @classmethod
    def from_values(cls, array_like, varlen_types=()):
        import pandas as pd
        from pandas.api import types as pd_types

        name = getattr(array_like, "name", None)
        if pd_types.is_object_dtype(array_like):
            inferred = pd_types.infer_dtype(array_like)
            if inferred == "bytes":
                return cls.from_dtype(np.bytes_, name, varlen_types)
            if inferred == "string":
                return cls.from_dtype(str, name, varlen_types)
            if inferred == "empty":
                return cls.from_dtype(str, name, varlen_types)
            raise NotImplementedError(f"{inferred} inferred dtype not supported (column {name})")
        if isinstance(getattr(array_like, "dtype", None), pd.CategoricalDtype):
            return cls.from_values(np.asarray(array_like.astype(array_like.cat.categories.dtype)), varlen_types)
        return cls.from_dtype(array_like.dtype, name, varlen_types)

    @classmethod
    def from_dtype(cls, dtype, column_name=None, varlen_types=()):
        import pandas as pd

        where = f"(column {column_name})"
        if isinstance(dtype, str) and dtype in ("ascii", "blob"):
            return cls(np.dtype("S"), var=True)
        if isinstance(dtype, pd.BooleanDtype):
            return cls(np.dtype("bool"), "boolean", True)
        if isinstance(dtype, pd.StringDtype):
            return cls(np.dtype("U"), "string", True, True)
        if isinstance(dtype, pd.api.extensions.ExtensionDtype) and str(dtype) in _NULLABLE_INTS:
            return cls(_NULLABLE_INTS[str(dtype)], str(dtype), True)
        if isinstance(dtype, str) and dtype in _NULLABLE_INTS:
            return cls(_NULLABLE_INTS[dtype], dtype, True)
        if isinstance(dtype, str) and dtype == "boolean":
            return cls(np.dtype("bool"), "boolean", True)
        if isinstance(dtype, str) and dtype == "string":
            return cls(np.dtype("U"), "string", True, True)
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise NotImplementedError(f"{dtype} dtype not supported {where}") from None
        if dtype.kind == "b":
            return cls(np.dtype("bool"), "bool")
        if dtype.kind in "iu" or (dtype.kind == "f" and dtype.itemsize in (4, 8)):
            return cls(dtype, None, False, dtype in varlen_types)
        if dtype.kind == "M" and np.datetime_data(dtype)[0] == "ns":
            return cls(dtype)
        if dtype.kind == "U":
            return cls(np.dtype("U"), var=True)
        if dtype.kind == "S":
            return cls(np.dtype("S"), var=True)
        raise NotImplementedError(f"{dtype} dtype not supported {where}")


def _infos(df, column_types, varlen_types):
    out = {}
    for name, column in df.items():
        if name in column_types:
            out[name] = ColumnInfo.from_dtype(column_types[name], name, varlen_types)
        else:
            out[name] = ColumnInfo.from_values(column, varlen_types)
    return out


def _dimension(name, dtype, values, full_domain, tile, filters):
    dtype = np.dtype(dtype)
    if dtype.kind in "SUO":
        return Dim(name=name, domain=(None, None), tile=None, dtype=np.bytes_, filters=filters)
    if full_domain or len(values) == 0:
        domain = None
    elif dtype.kind == "M":
        domain = (np.min(values).to_datetime64(), np.max(values).to_datetime64()) \
            if hasattr(np.min(values), "to_datetime64") else (np.min(values), np.max(values))
    else:
        domain = (dtype.type(np.min(values)), dtype.type(np.max(values)))
    if domain is not None and dtype.kind in "iu" and tile is not None:
        span = int(domain[1]) - int(domain[0]) + 1
        tile = max(1, min(int(tile), span))
    if domain is None and dtype.kind in "iuM":
        # The type's whole range (less NaT), less a tile at the top.
        info = np.iinfo(np.int64 if dtype.kind == "M" else dtype)
        lo, hi = info.min + int(dtype.kind == "M"), info.max - int(tile or 1)
        domain = (np.int64(lo).astype(dtype), np.int64(hi).astype(dtype)) if dtype.kind == "M" else (lo, hi)
    return Dim(name=name, domain=domain, tile=tile, dtype=dtype, filters=filters)


def from_pandas(uri, dataframe, **kwargs):
    """Writes ``dataframe`` as an array at ``uri`` (``mode`` ``ingest``,
    ``schema_only`` or ``append``; ``sparse``, ``index_dims``,
    ``column_types``, ``varlen_types``, ``tile``, ``full_domain``,
    ``allows_duplicates``, ``attr_filters``, ``dim_filters``,
    ``row_start_idx``, ``fillna``, ``timestamp``, ``ctx``, as TileDB-Py
    takes them)."""
    import pandas as pd

    mode = kwargs.pop("mode", "ingest")
    if mode not in ("ingest", "schema_only", "append"):
        raise TileDBError(f"Invalid mode specified ('{mode}')")
    sparse = kwargs.pop("sparse", True)
    ctx = kwargs.pop("ctx", None)
    if mode == "append":
        # The array appended to says which kind it is.
        with Array.load_typed(uri, ctx=ctx) as existing:
            sparse = existing.schema.sparse
        if not sparse and kwargs.get("row_start_idx") is None and not kwargs.get("fit_to_df"):
            raise TileDBError("Cannot append to dense array without either 'row_start_idx' or 'fit_to_df'")
    else:
        from .highlevel import array_exists

        if array_exists(uri):
            raise TileDBError(f"Array URI '{uri}' already exists!")
    index_dims = kwargs.pop("index_dims", None)
    column_types = dict(kwargs.pop("column_types", None) or {})
    varlen_types = tuple(np.dtype(t) for t in kwargs.pop("varlen_types", ()) or ())
    tile = kwargs.pop("tile", None)
    full_domain = kwargs.pop("full_domain", False)
    allows_duplicates = kwargs.pop("allows_duplicates", True)
    attr_filters = kwargs.pop("attr_filters", FilterList([ZstdFilter(1)]))
    coords_given = "coords_filters" in kwargs
    coords_filters = _filters_of(kwargs.pop("coords_filters", None), "") if coords_given else None
    # Coordinate filters given: the dimensions take them, not a default.
    dim_filters = kwargs.pop("dim_filters", None if coords_given else FilterList([ZstdFilter(1)]))
    offsets_filters = kwargs.pop("offsets_filters", None)
    date_spec = kwargs.pop("date_spec", None)
    # read_csv's index column (from_csv's); the frame's index is set by now.
    kwargs.pop("index_col", None)
    row_start_idx = kwargs.pop("row_start_idx", None)
    fillna = kwargs.pop("fillna", None)
    timestamp = kwargs.pop("timestamp", None)
    capacity = kwargs.pop("capacity", 0)
    cell_order = kwargs.pop("cell_order", "row-major")
    tile_order = kwargs.pop("tile_order", "row-major")
    kwargs.pop("debug", None)
    if kwargs:
        raise TypeError(f"from_pandas: unknown arguments {sorted(kwargs)}")
    df = dataframe
    if date_spec:
        df = df.assign(**{name: pd.to_datetime(df[name], format=fmt) for name, fmt in date_spec.items()})
    if fillna:
        df = df.fillna(fillna)
    if index_dims:
        df = df.reset_index(drop=isinstance(df.index, pd.RangeIndex) and df.index.name is None)
        df = df.set_index(index_dims)
    if row_start_idx is not None and isinstance(df.index, pd.RangeIndex):
        df = df.set_index(pd.RangeIndex(row_start_idx, row_start_idx + len(df)))
    index_names = [n if n is not None else ROWS for n in df.index.names]
    frame = df.reset_index()
    frame.columns = index_names + list(df.columns)
    infos = _infos(frame, column_types, varlen_types)
    dims = index_names
    if not sparse and (len(dims) != 1 or infos[dims[0]].dtype.kind not in "iu"):
        raise TileDBError("from_pandas: a dense array takes one integer index")
    if mode != "append":
        per_dim_tile = tile if isinstance(tile, dict) else {}
        default_tile = 10000 if len(dims) == 1 else 1000 if len(dims) == 2 else 100
        dimensions = []
        for name in dims:
            dtype = np.dtype("uint64") if name == ROWS else infos[name].dtype
            t = per_dim_tile.get(name, tile if not isinstance(tile, dict) else None) or default_tile
            dimensions.append(_dimension(name, dtype, frame[name].to_numpy(), full_domain, t,
                                         None if dim_filters is None else _filters_of(dim_filters, name)))
        attrs = [Attr(name=str(n), dtype="ascii" if column_types.get(n) == "ascii" else info.dtype,
                      var=info.var or None, nullable=info.nullable,
                      filters=_filters_of(attr_filters, str(n))) for n, info in infos.items() if n not in dims]
        schema = ArraySchema(domain=Domain(*dimensions), attrs=attrs, sparse=sparse, capacity=capacity,
                             allows_duplicates=allows_duplicates if sparse else False, cell_order=cell_order,
                             tile_order=tile_order, coords_filters=coords_filters,
                             offsets_filters=_filters_of(offsets_filters, None))
        Array.create(uri, schema, ctx=ctx)
    cls = SparseArray if sparse else DenseArray
    with cls(uri, mode="w", timestamp=timestamp, ctx=ctx) as A:
        if mode != "schema_only" and len(frame):
            values = {str(n): _values(frame[n], infos[n]) for n in infos if n not in dims}
            if sparse:
                A[tuple(_values(frame[n], infos[n]) for n in dims)] = values
            else:
                lo = int(frame[dims[0]].min())
                A[lo:lo + len(frame)] = values
        if mode != "append":
            # Written with the array, as TileDB-Py writes them.
            attr_repr = {n: info.repr for n, info in infos.items() if info.repr and n not in dims}
            index_repr = {n: str(infos[n].dtype) if n != ROWS else "int64" for n in dims}
            if attr_repr:
                A.meta["__pandas_attribute_repr"] = json.dumps(attr_repr)
            A.meta["__pandas_index_dims"] = json.dumps(index_repr)


def _filters_of(option, name):
    """A filter option as ``from_pandas`` takes it (a filter, a list of
    them, a FilterList, None for none, or a dict of those by field name)
    as a FilterList for field ``name``; None stays None for an option not
    per field."""
    if isinstance(option, dict):
        option = option.get(name)
    elif option is None and name is None:
        return None
    if option is None:
        return FilterList()
    if isinstance(option, FilterList):
        return option
    return FilterList([option] if not isinstance(option, (list, tuple)) else option)


def from_parquet(uri, parquet_uri, **kwargs):
    """Writes the Parquet file at ``parquet_uri`` as an array at ``uri``
    (``from_pandas``' arguments)."""
    import pandas as pd

    from_pandas(uri, pd.read_parquet(parquet_uri), **kwargs)


def _values(column, info):
    if info.nullable:
        mask = column.isna().to_numpy()
        if info.dtype.kind == "U":
            data = np.array([None if m else str(v) for v, m in zip(column, mask)], dtype=object)
        else:
            data = np.ma.MaskedArray(column.to_numpy(dtype=info.dtype, na_value=info.dtype.type()), mask=mask)
        return data
    if info.var or info.dtype.kind in "SU":
        return np.asarray(column, dtype=object)
    return column.to_numpy(dtype=info.dtype)


def open_dataframe(uri, *, attrs=None, use_arrow=None, idx=slice(None), ctx=None):
    """The array at ``uri`` as a pandas DataFrame (``attrs`` only), its
    index and column types as ``from_pandas`` stored them."""
    from .highlevel import open as open_array

    with open_array(uri, ctx=ctx) as A:
        df = A.query(attrs=attrs, coords=True).df[idx]
    # Only ``attrs``, in their order, once an index was taken from the metadata.
    if attrs and list(df.columns) != list(attrs):
        df = df[attrs]
    return df


def from_csv(uri, csv_file, **kwargs):
    """Writes the CSV file(s) at ``csv_file`` as an array at ``uri``
    (pandas' ``read_csv`` arguments with ``from_pandas``')."""
    import pandas as pd

    names = ("mode", "sparse", "index_dims", "column_types", "varlen_types", "tile", "full_domain",
             "allows_duplicates", "attr_filters", "dim_filters", "row_start_idx", "fillna", "timestamp", "ctx",
             "capacity", "cell_order", "tile_order", "debug")
    tiledb_args = {k: kwargs.pop(k) for k in names if k in kwargs}
    kwargs.pop("chunksize", None)
    files = [csv_file] if isinstance(csv_file, str) else list(csv_file)
    frame = pd.concat([pd.read_csv(f, **kwargs) for f in files], ignore_index=True)
    from_pandas(uri, frame, **tiledb_args)
