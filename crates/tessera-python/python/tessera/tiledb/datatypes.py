"""numpy dtypes and TileDB's datatypes (by name, as the schema's JSON form
spells them), both ways, with the cell counts TileDB-Py gives them:
complex numbers as two floats, records of one type as that many values,
strings and bytes as variable-length characters."""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

VAR_NUM = "var"

_UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
_DATETIME_NAMES = ["YEAR", "MONTH", "WEEK", "DAY", "HR", "MIN", "SEC", "MS", "US", "NS", "PS", "FS", "AS"]

# One numpy dtype a TileDB datatype, and back.
_PAIRS = [(np.dtype(n), n.upper()) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                                  "uint64", "float32", "float64")]
_PAIRS += [(np.dtype("bool"), "BOOL"), (np.dtype("S1"), "CHAR"), (np.dtype("<U1"), "STRING_UTF8")]
_PAIRS += [(np.dtype(f"<M8[{u}]"), f"DATETIME_{n}") for u, n in zip(_UNITS, _DATETIME_NAMES)]
_PAIRS += [(np.dtype(f"<m8[{u}]"), f"TIME_{n}") for u, n in zip(_UNITS[4:], _DATETIME_NAMES[4:])]
_TO_TILEDB = dict(_PAIRS)
_TO_TILEDB[np.dtype("complex64")] = "FLOAT32"
_TO_TILEDB[np.dtype("complex128")] = "FLOAT64"
_TO_NUMPY = {t: n for n, t in _PAIRS}
for _name in ("STRING_ASCII", "BLOB", "GEOM_WKB", "GEOM_WKT", "ANY"):
    _TO_NUMPY[_name] = np.dtype("S")
_TO_NUMPY["STRING_UTF16"] = np.dtype("S")
_TO_NUMPY["STRING_UTF32"] = np.dtype("S")
_TO_NUMPY["STRING_UCS2"] = np.dtype("S")
_TO_NUMPY["STRING_UCS4"] = np.dtype("S")
# TileDB-Py's names for the types numpy has no kind of.
_SPECIAL = {"ascii": ("STRING_ASCII", VAR_NUM), "blob": ("BLOB", 1), "wkb": ("GEOM_WKB", 1),
            "wkt": ("GEOM_WKT", 1)}


def tiledb_name(name):
    """A datatype's name as the JSON form spells it (``TILEDB_INT32``,
    ``int32``, ``libtiledb.DataType.INT32`` -> ``INT32``)."""
    return str(getattr(name, "name", name)).upper().removeprefix("TILEDB_")


@dataclass(frozen=True)
class DataType:
    """A field's numpy dtype, TileDB datatype name and values a cell
    (``"var"`` for variable-length cells)."""

    np_dtype: np.dtype
    tiledb_type: str
    ncells: object

    @classmethod
    def from_numpy(cls, dtype):
        try:
            hash(dtype)
        except TypeError:
            # A record's field list, say: numpy's dtype of it.
            dtype = np.dtype(dtype)
        return cls._from_numpy(dtype)

    @classmethod
    @lru_cache(maxsize=None)
    def _from_numpy(cls, dtype):
        if isinstance(dtype, str) and dtype in _SPECIAL:
            name, ncells = _SPECIAL[dtype]
            return cls(np.dtype("S"), name, ncells)
        dtype = np.dtype(dtype)
        if dtype.kind == "V":
            if dtype.shape != ():
                raise TypeError("nested sub-array numpy dtypes are not supported")
            kinds = {v[0] for v in dtype.fields.values()}
            if len(kinds) > 1:
                raise TypeError("heterogenous record numpy dtypes are not supported")
            base, ncells = kinds.pop(), len(dtype.fields)
            name = _TO_TILEDB.get(base)
            if name is not None:
                # As libtiledb gives it back: two floats are a complex.
                return cls(cls.from_tiledb(name, ncells).np_dtype, name, ncells)
        elif dtype.kind in "SU":
            # Stored as variable-length values: numpy pads fixed widths.
            base = np.dtype((dtype.kind, 1))
            ncells = VAR_NUM if dtype.itemsize == 0 else dtype.itemsize // base.itemsize
        else:
            base = dtype
            ncells = 2 if dtype.kind == "c" else 1
        name = _TO_TILEDB.get(base)
        if name is None:
            raise TypeError(f"{dtype!r} cannot be mapped to a DataType")
        return cls(dtype, name, ncells)

    @classmethod
    @lru_cache(maxsize=None)
    def from_tiledb(cls, tiledb_type, ncells=1):
        name = tiledb_name(tiledb_type)
        base = _TO_NUMPY.get(name)
        if base is None:
            raise TypeError(f"TileDB datatype {name} has no numpy dtype")
        if name in ("CHAR", "STRING_UTF8"):
            dtype = np.dtype(base.kind if ncells == VAR_NUM else (base.kind, ncells))
        elif ncells in (1, VAR_NUM):
            dtype = base
        elif ncells == 2 and base.kind == "f":
            dtype = np.dtype("complex64" if base.itemsize == 4 else "complex128")
        else:
            dtype = np.dtype([("", base)] * ncells)
        return cls(dtype, name, ncells)

    @property
    def domain(self):
        """The type's whole range: what a dimension without one spans."""
        dtype = self.np_dtype
        if dtype.kind in "mM":
            unit = np.datetime_data(dtype)
            return dtype.type(np.iinfo(np.int64).min + 1, unit), dtype.type(np.iinfo(np.int64).max, unit)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return info.min, info.max
        if dtype.kind in "fc":
            info = np.finfo(dtype)
            return info.min, info.max
        if dtype.kind == "b":
            return False, True
        if dtype.kind in "SU":
            return None, None
        raise TypeError(f"Cannot determine min/max for {dtype!r}")
