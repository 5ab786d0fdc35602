"""Metadata values in TileDB-Py's shapes: a scalar for one value, a tuple
for several, ``str`` for strings, ``bytes`` for BLOB, ``bool`` for BOOL;
and values to be written as the native side takes them."""

import json
import math

_STRINGS = {"STRING_ASCII", "STRING_UTF8", "CHAR"}
_BYTES = {"BLOB", "ANY"}
_FLOATS = {"FLOAT32", "FLOAT64"}


def _number(v, datatype):
    if datatype == "BOOL":
        return bool(v)
    if datatype in _FLOATS:
        if isinstance(v, str):
            return {"NaN": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
        return float(v)
    return v


def metadata_dict(entries):
    """``{key: value}`` from the native ``(key, datatype, json)`` triples."""
    out = {}
    for key, datatype, text in entries:
        v = json.loads(text)
        if datatype in _BYTES or datatype.endswith(":hex"):
            # Blobs, and text that is not UTF-8: the bytes.
            out[key] = bytes.fromhex(v)
        elif datatype in _STRINGS:
            out[key] = v
        elif isinstance(v, list):
            out[key] = tuple(_number(x, datatype) for x in v)
        else:
            out[key] = _number(v, datatype)
    return out


def encode_value(value, bool_type):
    """``(datatype, text)`` for a metadata value as the native
    ``put_metadata`` takes it, or None for a value of no such type: str
    UTF-8, bytes BLOB, bool ``bool_type`` (BOOL, or INT64 as TileDB-Py
    writes it), int INT64, float FLOAT64, numpy scalars and 1-D arrays of
    numbers (and lists of them) as their dtype."""
    import numpy as np

    if isinstance(value, str):
        return "STRING_UTF8", value
    if isinstance(value, (bytes, bytearray)):
        return "BLOB", bytes(value).hex()
    if isinstance(value, (bool, np.bool_)):
        return bool_type, json.dumps(int(bool(value)))
    if isinstance(value, int):
        return "INT64", json.dumps(int(value))
    if isinstance(value, float):
        return "FLOAT64", number_text(value)
    array = np.asarray(value)
    if array.ndim <= 1 and array.dtype.kind in "iuf" and array.size > 0:
        name = array.dtype.name.upper()
        items = [number_text(v) if array.dtype.kind == "f" else json.dumps(int(v)) for v in array.ravel()]
        return name, items[0] if array.ndim == 0 else "[" + ", ".join(items) + "]"
    return None


def number_text(v):
    """A float as JSON, NaN and the infinities as text."""
    v = float(v)
    if v != v:
        return '"NaN"'
    if v in (math.inf, -math.inf):
        return '"inf"' if v > 0 else '"-inf"'
    return json.dumps(v)
