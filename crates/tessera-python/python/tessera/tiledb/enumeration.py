"""``Enumeration``: the values an enumerated attribute's keys index."""

import numpy as np

from . import _values
from .datatypes import DataType, VAR_NUM
from .libtiledb import TileDBError


class Enumeration:
    """An enumeration: ``name``, ``ordered``, its ``values`` (a numpy
    array) and ``dtype``."""

    def __init__(self, name, ordered, values=None, dtype=None, ctx=None):
        if values is None:
            if dtype is None:
                raise ValueError("dtype must be provided for an empty enumeration")
            values = np.array([], dtype=dtype)
        values = np.asarray(values) if not isinstance(values, np.ndarray) else values
        if dtype is not None:
            values = values.astype(dtype)
        if values.dtype.kind == "O":
            values = values.astype(str if all(isinstance(v, str) for v in values) else bytes)
        self._name = name
        self._ordered = bool(ordered)
        self._values = values

    @property
    def name(self):
        return self._name

    @property
    def ordered(self):
        return self._ordered

    @property
    def dtype(self):
        kind = self._values.dtype.kind
        return np.dtype(kind) if kind in "SU" else self._values.dtype

    @property
    def cell_val_num(self):
        return 4294967295 if self._values.dtype.kind in "SU" else 1

    def values(self):
        return self._values

    def extend(self, values):
        """A copy with ``values`` appended (of the values' own kind: text,
        booleans or numbers)."""
        added = np.asarray(values)
        kinds = {"U": "text", "S": "text", "O": "text", "b": "bool", "i": "int", "u": "int", "f": "float"}
        have, got = kinds.get(self._values.dtype.kind), kinds.get(added.dtype.kind)
        if len(added) and have != got and not (have == "float" and got == "int"):
            raise TileDBError(f"enumeration {self._name!r} holds {have} values; cannot extend it with {got} values")
        return Enumeration(self._name, self._ordered, np.concatenate([self._values, added.astype(self._values.dtype)
                                                                     if have != "text" else added]))

    def __eq__(self, other):
        return (isinstance(other, Enumeration) and self._name == other._name and self._ordered == other._ordered
                and np.array_equal(self._values, other._values))

    def __repr__(self):
        return f"Enumeration(name='{self._name}', dtype={self.dtype}, dtype_name='{self.dtype.name}', " \
               f"cell_val_num={4294967295 if self.cell_val_num == VAR_NUM else 1}, ordered={self._ordered}, " \
               f"values={self._values.tolist()})"

    def to_json(self):
        dt = DataType.from_numpy(self.dtype)
        name = {"S": "STRING_ASCII", "U": "STRING_UTF8"}.get(self._values.dtype.kind, dt.tiledb_type)
        d = {"name": self._name, "type": name, "ordered": self._ordered,
             "values": [_values.to_json(v, self.dtype) for v in self._values]}
        if self._values.dtype.kind in "SU":
            d["cell_val_num"] = VAR_NUM
        return d

    @staticmethod
    def from_json(d):
        dt = DataType.from_tiledb(d["type"], d.get("cell_val_num", 1) if d.get("cell_val_num") != VAR_NUM else 1)
        kind = dt.np_dtype.kind
        base = np.dtype("U") if d["type"] == "STRING_UTF8" else np.dtype("S") if kind == "S" else dt.np_dtype
        values = [_values.from_json(v, base) for v in d.get("values", [])]
        return Enumeration(d["name"], d.get("ordered", False), np.array(values, dtype=base) if values else None,
                           dtype=base)
