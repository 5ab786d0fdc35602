"""``A.meta``: an array's metadata as a mapping; set and deleted keys are
written at once (one metadata file a change) on an array opened for
writing."""

import json
from collections.abc import MutableMapping

import numpy as np

from tessera import _native
from tessera._meta import number_text

from .ctx import storage
from .datatypes import DataType
from .libtiledb import TileDBError


_NP_DATA = "__np_flat_"
_NP_SHAPE = "__np_shape_"


def stored(key, value):
    """What setting ``key`` to ``value`` writes, as TileDB-Py writes it:
    ``(puts, deletes)``, puts as the native ``(key, datatype, text)``. A
    numpy array is kept flat under ``__np_flat_<key>`` (its shape, when
    not 1-D, under ``__np_shape_<key>``); a list or tuple of numbers as
    one INT64 or FLOAT64 value of several; bytes as BLOB, text as UTF-8."""
    if isinstance(value, np.ndarray):
        flat = value.ravel()
        puts = [(_NP_DATA + key, *_array_entry(flat))]
        if value.shape != flat.shape:
            puts.append((_NP_SHAPE + key, *_sequence_entry(tuple(value.shape))))
    elif isinstance(value, np.str_):
        puts = [(key, "STRING_UTF8", str(value))]
    elif isinstance(value, np.bytes_):
        puts = [(key, "CHAR", bytes(value).decode("ascii"))] if bytes(value).isascii() else \
            [(key, "BLOB", bytes(value).hex())]
    elif isinstance(value, np.generic):
        puts = [(key, *_array_entry(np.asarray(value).reshape(1)))]
    else:
        puts = [(key, *_sequence_entry(value))]
    written = {k for k, _, _ in puts}
    deletes = [k for k in (key, _NP_DATA + key, _NP_SHAPE + key) if k not in written]
    return puts, deletes


def _sequence_entry(value):
    if isinstance(value, (bytes, bytearray)):
        return "BLOB", bytes(value).hex()
    if isinstance(value, str):
        return "STRING_UTF8", value
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items:
        return "INT32", "[]"
    if not isinstance(items[0], (int, float)):
        raise TypeError(f"Unsupported item type '{type(items[0])}'")
    kind = int if isinstance(items[0], int) else float
    if any(not isinstance(v, kind) for v in items):
        raise TypeError(f"Mixed-type sequences are not supported: {value}")
    if kind is int and any(not -(1 << 63) <= v < (1 << 63) for v in items):
        raise OverflowError(f"metadata value {value!r} does not fit a 64-bit integer")
    return ("INT64", json.dumps([int(v) for v in items])) if kind is int else \
        ("FLOAT64", "[" + ", ".join(number_text(v) for v in items) + "]")


def _array_entry(flat):
    """A flat numpy array's datatype and text: numbers (datetimes as
    their integers), or single characters as one string."""
    kind = flat.dtype.kind
    if kind in "SU":
        if flat.dtype.itemsize != (4 if kind == "U" else 1) and flat.size != 1:
            raise TypeError(f"Unsupported item type '{flat.dtype}': only arrays of single characters, or of "
                            "one string, are kept")
        raw = flat.astype(flat.dtype.newbyteorder("<")).tobytes()
        # As TileDB-Py keeps them: the array's own bytes (UTF-32 for text).
        name = "STRING_UTF8" if kind == "U" else "STRING_ASCII"
        return (name, raw.decode("ascii")) if raw.isascii() else (name + ":hex", raw.hex())
    if kind not in "iufbmM":
        raise TypeError(f"Unsupported item type '{flat.dtype}'")
    name = DataType.from_numpy(flat.dtype).tiledb_type
    if kind in "mM":
        return name, json.dumps(flat.view(np.int64).tolist())
    if kind == "f":
        return name, "[" + ", ".join(number_text(v) for v in flat.tolist()) + "]"
    return name, json.dumps([int(v) for v in flat.tolist()])


def read_entries(triples):
    """``{key: (value, datatype)}`` from the native ``(key, datatype,
    json)`` triples, numpy arrays put back together from their flat data
    and shape."""
    raw = {k: (t, json.loads(text)) for k, t, text in triples}
    out = {}
    for key, (t, v) in raw.items():
        if key.startswith(_NP_SHAPE):
            continue
        if key.startswith(_NP_DATA):
            name = key[len(_NP_DATA):]
            value = _array_value(t, v)
            if _NP_SHAPE + name in raw:
                value = value.reshape(tuple(raw[_NP_SHAPE + name][1] or ()))
            out[name] = (value, t)
        else:
            out[key] = (_value(t, v), t)
    return out


def _array_value(t, v):
    if t.endswith(":hex"):
        raw = bytes.fromhex(v)
        return np.frombuffer(raw, dtype="<U1" if t.startswith("STRING_UTF8") else "S1").copy()
    if t in _BYTES:
        return np.frombuffer(bytes.fromhex(v), dtype="S1")
    if t == "STRING_UTF8":
        raw = v.encode("utf-8")
        return np.frombuffer(raw, dtype="<U1").copy() if len(raw) % 4 == 0 else np.array(list(v), dtype="U1")
    if t in _TEXT or t == "CHAR":
        return np.frombuffer(v.encode("utf-8"), dtype="S1").copy()
    dtype = DataType.from_tiledb(t).np_dtype
    items = v if isinstance(v, list) else [v]
    if dtype.kind in "mM":
        return np.array(items, dtype=np.int64).view(dtype)
    return np.array(items, dtype=dtype)


def _value(t, v):
    if t in _BYTES or t.endswith(":hex"):
        return bytes.fromhex(v)
    if t in _TEXT:
        return v
    if t == "CHAR":
        return v.encode()
    dtype = DataType.from_tiledb(t).np_dtype
    items = v if isinstance(v, list) else [v]
    items = [float(x) if dtype.kind == "f" else x for x in items]
    if len(items) == 1:
        # One value as a numpy scalar (TileDB-Py's types), several as a tuple.
        return dtype.type(items[0]) if dtype.kind in "if" else items[0]
    return tuple(items)


_BYTES = ("BLOB", "GEOM_WKB", "GEOM_WKT")
_TEXT = ("STRING_UTF8", "STRING_ASCII")


class MetadataView(MutableMapping):
    """The read side of a metadata mapping over ``_triples()`` (the
    native entries)."""

    def _triples(self):
        raise NotImplementedError

    def _owner(self):
        """The open array or group whose ``_meta_entries`` caches the
        decoded entries (its metadata as of its open)."""
        raise NotImplementedError

    def _entries(self):
        owner = self._owner()
        if owner._meta_entries is None:
            owner._meta_entries = read_entries(self._triples())
        return owner._meta_entries

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        entries = self._entries()
        if key not in entries:
            raise KeyError(key)
        return entries[key][0]

    def __iter__(self):
        return iter(self._entries())

    def __len__(self):
        return len(self._entries())

    def __contains__(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        return key in self._entries()

    def keys(self):
        return self._entries().keys()

    def values(self):
        return [v for v, _ in self._entries().values()]

    def items(self):
        return [(k, v) for k, (v, _) in self._entries().items()]

    def setdefault(self, key, default=None):
        raise NotImplementedError("Metadata.setdefault requires read-write access")

    def pop(self, key, default=None):
        raise NotImplementedError("Metadata.pop requires read-write access")

    def popitem(self):
        raise NotImplementedError("Metadata.popitem requires read-write access")

    def clear(self):
        raise NotImplementedError("Metadata.clear requires read-write access")

    def _kind(self):
        return "Array"

    def dump(self):
        for k, (v, t) in self._entries().items():
            t = t.removesuffix(":hex")
            print(f"### {self._kind()} Metadata ###\n- Key: {k}\n- Value: {v}\n- Type: DataType.{t}\n")

    def __repr__(self):
        return str(dict(self.items()))


class Metadata(MetadataView):
    """The metadata of an open array."""

    def __init__(self, array):
        self._array = array

    def _owner(self):
        return self._array

    def _triples(self):
        if not self._array._open:
            raise TileDBError("Array is closed: its metadata was given up with it")
        return self._array._native.metadata()

    def _put(self, put, delete):
        if self._array.mode not in ("w", "m"):
            raise TileDBError("Array is not opened in write mode")
        a = self._array
        ts = a._timestamp if isinstance(a._timestamp, int) else None
        try:
            _native.put_metadata(a.uri, put, delete, False, ts, a._key, storage(a.uri, a._ctx))
        except Exception as e:
            raise TileDBError(str(e)) from None
        # The handle reads metadata as of its open: open anew to see the change.
        a.reopen()

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        self._put(*stored(key, value))

    def __delitem__(self, key):
        self._put([], [key, _NP_DATA + key, _NP_SHAPE + key])

    def update(self, other=(), **kwargs):
        puts, deletes = [], []
        for k, v in dict(other, **kwargs).items():
            p, d = stored(k, v)
            puts += p
            deletes += d
        self._put(puts, deletes)

