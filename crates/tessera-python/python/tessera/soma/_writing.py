"""What making SOMA objects shares: the metadata every new object gets,
and Arrow columns turned into the cells a TileDB array stores (enumerated
columns as keys into their enumerations)."""

import numpy as np
import pyarrow as pa

import tessera

from ._errors import AlreadyExistsError, SOMAError, SOMAValueError
from ._metadata import encode, put

# The SOMA encoding version tiledbsoma 2.3.0 writes.
ENCODING_VERSION = "1.1.0"


def _exists(uri, options):
    return tessera.object_type(uri, storage_options=options) is not None


def create_object(uri, make, metadata, is_group, options):
    """Makes the group or array at ``uri`` (``make()``), then writes its
    ``metadata``; :class:`AlreadyExistsError` when something is there."""
    try:
        make()
    except tessera.TesseraError as e:
        if _exists(uri, options):
            raise AlreadyExistsError(f"{uri}: already exists") from None
        raise SOMAError(f"{uri}: cannot create: {e}") from None
    put(uri, [(k, *encode(k, v)) for k, v in metadata.items()], [], is_group, options)


# Arrow types tessera.write takes for each TileDB type of a column.
_ARROW = {
    "INT8": pa.int8(), "INT16": pa.int16(), "INT32": pa.int32(), "INT64": pa.int64(),
    "UINT8": pa.uint8(), "UINT16": pa.uint16(), "UINT32": pa.uint32(), "UINT64": pa.uint64(),
    "FLOAT32": pa.float32(), "FLOAT64": pa.float64(), "BOOL": pa.bool_(),
    "STRING_UTF8": pa.large_string(), "STRING_ASCII": pa.large_string(), "BLOB": pa.large_binary(),
    "DATETIME_SEC": pa.timestamp("s"), "DATETIME_MS": pa.timestamp("ms"),
    "DATETIME_US": pa.timestamp("us"), "DATETIME_NS": pa.timestamp("ns"),
}


def field_types(doc):
    """Each field's ``(TileDB type, nullable, enumeration name)`` of a schema
    document."""
    out = {d["name"]: (d["type"], False, None) for d in doc["dimensions"]}
    for a in doc.get("attributes", []):
        out[a["name"]] = (a["type"], bool(a.get("nullable")), a.get("enumeration"))
    return out


def enumeration_values(doc):
    """Each enumeration's values, by name."""
    return {e["name"]: list(e["values"]) for e in doc.get("enumerations", [])}


def dataframe_cells(uri, doc, table):
    """``table`` as the cells of the DataFrame whose schema is ``doc``:
    columns cast to the stored types, enumerated columns as keys. Returns
    the cells and the values to append to each enumeration first
    (``{name: [values]}``)."""
    types = field_types(doc)
    names = table.column_names
    unknown = [n for n in names if n not in types]
    if unknown:
        raise SOMAValueError(f"{uri}: the data has columns {unknown} the DataFrame does not have "
                             f"(columns: {', '.join(types)})")
    missing = [n for n in types if n not in names]
    if missing:
        raise SOMAValueError(f"{uri}: the data lacks the DataFrame's columns {missing}")
    enums = enumeration_values(doc)
    extend = {}
    columns = {}
    for name in names:
        t, nullable, enum = types[name]
        column = table.column(name).combine_chunks() if table.num_rows else pa.array([], _ARROW[t])
        if enum is not None:
            column, new = _keys(uri, name, column, enums[enum], t)
            if new:
                extend[enum] = new
        else:
            column = _cast(uri, name, column, _ARROW[t])
        if not nullable and column.null_count:
            raise SOMAValueError(f"{uri}: column {name!r} holds {column.null_count} nulls and is not nullable")
        columns[name] = column
    return pa.table(columns), extend


def _cast(uri, name, column, to):
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if column.type == to:
        return column
    try:
        return column.cast(to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SOMAValueError(f"{uri}: column {name!r} of {column.type} does not fit the column's type {to}: {e}")


def _keys(uri, name, column, current, key_type):
    """An enumerated column's values as keys into its enumeration (whose
    values are ``current``), and the values it holds that the enumeration
    lacks (appended, in the order the data's dictionary holds them)."""
    if pa.types.is_dictionary(column.type):
        dictionary, indices = column.dictionary.to_pylist(), column.indices
        used = np.unique(indices.drop_null().to_numpy(zero_copy_only=False)) if len(indices) else []
        values = [dictionary[i] for i in used]
        order = dictionary
    else:
        values = [v for v in pa.compute.unique(column).to_pylist() if v is not None]
        order = values
    known = {v: i for i, v in enumerate(current)}
    wanted = set(values)
    new = [v for v in order if v in wanted and v not in known]
    for i, v in enumerate(new):
        known[v] = len(current) + i
    limit = {"INT8": 2**7, "INT16": 2**15, "INT32": 2**31, "UINT8": 2**8, "UINT16": 2**16,
             "UINT32": 2**32}.get(key_type, 2**63)
    if len(known) > limit:
        raise SOMAValueError(f"{uri}: column {name!r} would need {len(known)} enumeration values; "
                             f"its {key_type} keys hold {limit}")
    if pa.types.is_dictionary(column.type):
        mapping = np.array([known.get(v, -1) for v in dictionary], dtype=np.int64)
        idx = column.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        keys = mapping[idx] if len(mapping) else idx
    else:
        keys = np.array([known.get(v, 0) for v in column.to_pylist()], dtype=np.int64)
    mask = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    arrow = pa.array(keys, mask=mask if mask.any() else None).cast(_ARROW[key_type])
    return arrow, new


def extension(extend):
    """The evolution that appends ``{name: [values]}`` to enumerations
    (bytes as the schema's JSON form writes them)."""
    return {"extend_enumerations": {name: [{"hex": v.hex()} if isinstance(v, bytes) else v for v in values]
                                    for name, values in extend.items()}}
