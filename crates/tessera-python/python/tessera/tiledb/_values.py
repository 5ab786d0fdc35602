"""Values of a field (domain bounds, tile extents, fill values,
enumeration values) to and from the schema's JSON form: numbers as
numbers (NaN and the infinities as text), datetimes as integers in their
unit, text as strings, other bytes as ``{"hex": ...}``, cells of several
values as lists."""

import math

import numpy as np


def to_json(value, dtype):
    """One value (or a cell of several) of numpy ``dtype`` as JSON."""
    dtype = np.dtype(dtype)
    if dtype.kind == "V" and dtype.fields:
        return [to_json(v, dtype.fields[n][0]) for n, v in zip(dtype.names, value)]
    if dtype.kind == "c":
        c = complex(np.asarray(value, dtype=dtype))
        return [number(c.real), number(c.imag)]
    if dtype.kind in "mM":
        return int(np.asarray(value, dtype=dtype).astype(np.int64))
    if dtype.kind == "S":
        raw = value if isinstance(value, bytes) else bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"hex": raw.hex()}
    if dtype.kind == "U":
        return str(value)
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    return number(float(value))


def number(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def from_json(value, dtype):
    """A JSON value as numpy ``dtype``'s scalar (a cell of several: a
    record or complex)."""
    dtype = np.dtype(dtype)
    if isinstance(value, dict) and "hex" in value:
        raw = bytes.fromhex(value["hex"])
        return raw if dtype.kind == "S" else raw.decode("utf-8", "replace")
    if dtype.kind == "c":
        re, im = (float(v) for v in value)
        return dtype.type(complex(re, im))
    if dtype.kind == "V" and dtype.fields:
        return np.array(tuple(from_json(v, dtype.fields[n][0]) for n, v in zip(dtype.names, value)), dtype=dtype)[()]
    if dtype.kind in "mM":
        return np.asarray(int(value), dtype=np.int64).astype(dtype)[()]
    if dtype.kind == "S":
        return value.encode() if isinstance(value, str) else bytes(value)
    if dtype.kind == "U":
        return str(value)
    if isinstance(value, str):
        value = float(value.replace("NaN", "nan")) if dtype.kind == "f" else int(value)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return dtype.type(value)


def native_bound(v, dim):
    """A coordinate of ``dim`` as tessera's reads take it: datetimes as
    integers in their unit, numpy scalars as Python's (bytes stay bytes:
    a string coordinate need not be UTF-8)."""
    if isinstance(v, np.datetime64) or dim.dtype.kind in "mM":
        return int(np.asarray(v).astype(dim.dtype).astype(np.int64))
    if isinstance(v, np.generic):
        return v.item()
    return v


def extent(lo, hi):
    """How many coordinates ``[lo, hi]`` spans on an integer or datetime
    dimension."""
    return int(np.asarray(hi).astype(np.int64)) - int(np.asarray(lo).astype(np.int64)) + 1
