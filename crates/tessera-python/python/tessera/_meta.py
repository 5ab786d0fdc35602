"""Metadata values in TileDB-Py's shapes: a scalar for one value, a tuple
for several, ``str`` for strings, ``bytes`` for BLOB, ``bool`` for BOOL."""

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
        if datatype in _BYTES:
            out[key] = bytes.fromhex(v)
        elif datatype in _STRINGS:
            out[key] = v
        elif isinstance(v, list):
            out[key] = tuple(_number(x, datatype) for x in v)
        else:
            out[key] = _number(v, datatype)
    return out
