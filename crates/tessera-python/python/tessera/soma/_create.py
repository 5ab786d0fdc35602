"""The TileDB schemas of new SOMA arrays, as tiledbsoma 2.3.0 lays them
out: what ``DataFrame.create``, ``SparseNDArray.create`` and
``DenseNDArray.create`` give ``tessera.create`` (the schema's JSON form).

Every index column's core domain is as large as its type allows, less a
tile extent (libtiledb's room to round a domain up to whole tiles); the
domain users see and grow is the current domain.
"""

import pyarrow as pa

from ._errors import SOMAValueError, SOMATypeError

# tiledbsoma's default tile extent and sparse capacity.
TILE_EXTENT = 2048
CAPACITY = 100_000
INT64_MAX = 2**63 - 1

# Filters tiledbsoma writes: dimensions zstd at level 3, attributes at the
# codec's default; offsets and validity as libtiledbsoma sets them.
_DIM_FILTERS = [{"name": "zstd", "level": 3}]
_ATTR_FILTERS = [{"name": "zstd", "level": -1}]
_OFFSETS_FILTERS = [
    {"name": "double_delta", "level": -1},
    {"name": "bit_width_reduction", "max_window": 256},
    {"name": "zstd", "level": -1},
]
_COORDS_FILTERS = [{"name": "zstd", "level": -1}]
_VALIDITY_FILTERS = [{"name": "rle", "level": -1}]

_NUMBERS = {
    pa.int8(): "INT8", pa.int16(): "INT16", pa.int32(): "INT32", pa.int64(): "INT64",
    pa.uint8(): "UINT8", pa.uint16(): "UINT16", pa.uint32(): "UINT32", pa.uint64(): "UINT64",
    pa.float32(): "FLOAT32", pa.float64(): "FLOAT64", pa.bool_(): "BOOL",
    pa.timestamp("s"): "DATETIME_SEC", pa.timestamp("ms"): "DATETIME_MS",
    pa.timestamp("us"): "DATETIME_US", pa.timestamp("ns"): "DATETIME_NS",
}
_STRINGS = (pa.string(), pa.large_string())
# Arrow's C format characters, which name an enumeration after its column
# as libtiledbsoma names it (``cell_type_U``: large strings).
_FORMATS = {
    pa.int8(): "c", pa.int16(): "s", pa.int32(): "i", pa.int64(): "l",
    pa.uint8(): "C", pa.uint16(): "S", pa.uint32(): "I", pa.uint64(): "L",
    pa.float32(): "f", pa.float64(): "g", pa.bool_(): "b",
    pa.string(): "U", pa.large_string(): "U", pa.binary(): "Z", pa.large_binary(): "Z",
    pa.timestamp("s"): "tss:", pa.timestamp("ms"): "tsm:", pa.timestamp("us"): "tsu:", pa.timestamp("ns"): "tsn:",
}
_BYTES = (pa.binary(), pa.large_binary())


def tiledb_type(t, name, dimension=False):
    """The TileDB datatype and whether cells are var-sized, for an Arrow
    type (a dictionary's: its index type)."""
    if pa.types.is_dictionary(t):
        t = t.index_type
    if t in _NUMBERS and not (dimension and t == pa.bool_()):
        return _NUMBERS[t], False
    if t in _STRINGS:
        return ("STRING_ASCII" if dimension else "STRING_UTF8"), True
    if t in _BYTES:
        return ("STRING_ASCII" if dimension else "BLOB"), True
    raise SOMATypeError(f"column {name!r}: Arrow type {t} has no TileDB type (use a number, bool, string, "
                        "binary, timestamp or dictionary type)")


def _common(sparse):
    doc = {
        "array_type": "sparse" if sparse else "dense",
        "cell_order": "row-major",
        "tile_order": "row-major",
        "coords_filters": _COORDS_FILTERS,
        "offsets_filters": _OFFSETS_FILTERS,
        "validity_filters": _VALIDITY_FILTERS,
    }
    # libtiledbsoma sets the capacity of dense arrays too (unused there).
    doc.update(capacity=CAPACITY, allows_duplicates=False)
    return doc


def _int_dimension(name, extent, shape):
    """An int64 index column: the whole non-negative domain less an extent,
    ``shape`` coordinates in force."""
    return (
        {"name": name, "type": "INT64", "domain": [0, INT64_MAX - 1 - extent], "tile_extent": extent,
         "filters": _DIM_FILTERS},
        [0, shape - 1],
    )


def ndarray_schema(type, shape, sparse):
    """A SparseNDArray's or DenseNDArray's schema: ``soma_dim_i`` per slot of
    ``shape``, ``soma_data`` of the Arrow ``type``."""
    if not shape:
        raise SOMAValueError("an NDArray needs a shape of at least one dimension")
    if any(s is None or int(s) < 1 for s in shape):
        raise SOMAValueError(f"shape {tuple(shape)}: every slot must be a positive int")
    data_type, var = tiledb_type(type, "soma_data")
    if var or pa.types.is_dictionary(type):
        raise SOMATypeError(f"soma_data: an NDArray holds numbers, not {type}")
    if sparse:
        extent = TILE_EXTENT
    else:
        extent = {1: 2048, 2: 512, 3: 128}.get(len(shape), 4)
    dims = [_int_dimension(f"soma_dim_{i}", extent, int(s)) for i, s in enumerate(shape)]
    doc = _common(sparse)
    doc["dimensions"] = [d for d, _ in dims]
    doc["current_domain"] = [r for _, r in dims]
    doc["attributes"] = [{"name": "soma_data", "type": data_type, "filters": _ATTR_FILTERS}]
    return doc


def dataframe_schema(schema, index_column_names=("soma_joinid",), domain=None):
    """A DataFrame's schema from an Arrow ``schema`` (``soma_joinid`` added
    if missing): index columns as dimensions, the others as attributes
    (dictionaries as enumerations), ``domain`` per index column."""
    if "soma_joinid" not in schema.names:
        schema = schema.append(pa.field("soma_joinid", pa.int64(), nullable=False))
    index_column_names = list(index_column_names)
    for name in index_column_names:
        if name not in schema.names:
            raise SOMAValueError(f"index column {name!r} is not in the schema ({', '.join(schema.names)})")
    if schema.field("soma_joinid").type != pa.int64():
        raise SOMAValueError(f"soma_joinid must be int64, not {schema.field('soma_joinid').type}")
    for name in schema.names:
        if name.startswith("soma_") and name != "soma_joinid":
            raise SOMAValueError(f"column {name!r}: names starting soma_ are reserved")
    if domain is None:
        domain = [None] * len(index_column_names)
    if len(domain) != len(index_column_names):
        raise SOMAValueError(f"domain has {len(domain)} slots for {len(index_column_names)} index columns")
    doc = _common(True)
    dims, current = [], []
    for name, slot in zip(index_column_names, domain):
        d, r = _index_column(schema.field(name), slot)
        dims.append(d)
        current.append(r)
    doc["dimensions"] = dims
    doc["current_domain"] = current
    attrs, enums = [], []
    for field in schema:
        if field.name in index_column_names:
            continue
        attr, enum = _attribute(field, schema.metadata)
        attrs.append(attr)
        if enum is not None:
            enums.append(enum)
    doc["attributes"] = attrs
    if enums:
        doc["enumerations"] = enums
    return doc


def _index_column(field, slot):
    """A dimension for an index column, and its current domain."""
    t, var = tiledb_type(field.type, field.name, dimension=True)
    if var:
        if slot not in (None, ("", ""), ["", ""]):
            raise SOMAValueError(f"index column {field.name!r}: string index columns take no domain")
        return {"name": field.name, "type": t, "filters": _DIM_FILTERS}, ["", ""]
    if not t.startswith(("INT", "UINT")) and field.name == "soma_joinid":
        raise SOMAValueError("soma_joinid must be int64")
    if t == "INT64" or field.name == "soma_joinid":
        lo, hi = (0, 0) if slot is None else (int(slot[0]), int(slot[1]))
        if field.name == "soma_joinid" and (lo < 0 or hi < lo):
            raise SOMAValueError(f"domain for soma_joinid must be non-negative with lower <= upper; got ({lo}, {hi})")
        extent = min(TILE_EXTENT, hi - lo + 1)
        top = 2**63 - 2 if field.name == "soma_joinid" else INT64_MAX - 1
        bottom = 0 if field.name == "soma_joinid" else -(2**63)
        dim = {"name": field.name, "type": "INT64", "domain": [bottom, top - extent], "tile_extent": extent,
               "filters": _DIM_FILTERS}
        return dim, [lo, hi]
    raise SOMATypeError(f"index column {field.name!r}: tessera.soma indexes by int64 and string columns, "
                        f"not {field.type}")


def _attribute(field, metadata):
    """An attribute for a non-index column, and its enumeration if the
    column is a dictionary."""
    t, var = tiledb_type(field.type, field.name)
    nullable = bool(field.nullable) if metadata is None else (
        field.nullable or metadata.get(field.name.encode()) == b"nullable")
    attr = {"name": field.name, "type": t, "filters": _ATTR_FILTERS, "nullable": nullable}
    if var:
        attr["cell_val_num"] = "var"
    enum = None
    if pa.types.is_dictionary(field.type):
        value_type = field.type.value_type
        et, evar = tiledb_type(value_type, field.name)
        name = f"{field.name}_{_FORMATS.get(value_type, '')}"
        enum = {"name": name, "type": et, "ordered": bool(field.type.ordered), "values": []}
        if evar:
            enum["cell_val_num"] = "var"
        attr["enumeration"] = name
    return attr, enum
