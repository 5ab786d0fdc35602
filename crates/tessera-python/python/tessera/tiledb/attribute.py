"""``Attr``: one attribute of an array."""

import io
import warnings

import numpy as np

from . import _values
from .datatypes import VAR_NUM, DataType, tiledb_name
from .filter import FilterList, filter_list


class Attr:
    """An attribute: ``name``, ``dtype`` (numpy's, or ``"ascii"``,
    ``"blob"``, ``"wkb"``, ``"wkt"``), ``fill``, ``var`` (variable-length
    cells), ``nullable``, ``filters``, ``enum_label`` (the enumeration its
    keys index)."""

    def __init__(self, name="", dtype=np.float64, fill=None, var=None, nullable=False, filters=None,
                 enum_label=None, ctx=None):
        dt = DataType.from_numpy(dtype)
        var = _var_length(dtype, dt, var)
        ncells = dt.ncells
        if var:
            ncells = VAR_NUM
        elif ncells == VAR_NUM:
            if dtype != "blob":
                raise TypeError("dtype is not compatible with var-length attribute")
            ncells = 1
        self._name = name
        self._type = dt.tiledb_type
        self._ncells = ncells
        self._dtype = dt.np_dtype if ncells == dt.ncells else DataType.from_tiledb(self._type, ncells).np_dtype
        if dt.tiledb_type in ("STRING_ASCII", "BLOB", "GEOM_WKB", "GEOM_WKT"):
            self._dtype = np.dtype("S")
        self._nullable = bool(nullable)
        self._filters = filter_list(filters) if filters is not None else FilterList()
        self._enum_label = enum_label
        self._fill = None
        if fill is not None:
            self.fill = fill

    @property
    def name(self):
        return self._name

    @property
    def _tiledb_dtype(self):
        """The attribute's TileDB datatype (``libtiledb.DataType``)."""
        from .libtiledb import DataType as TileDBType

        return TileDBType[self._type]

    @property
    def isanon(self):
        return self._name in ("", "__attr")

    @property
    def dtype(self):
        return self._dtype

    @property
    def isvar(self):
        return self._ncells == VAR_NUM

    @property
    def ncells(self):
        return 4294967295 if self._ncells == VAR_NUM else self._ncells

    @property
    def isnullable(self):
        return self._nullable

    @property
    def isascii(self):
        return self._type == "STRING_ASCII"

    @property
    def enum_label(self):
        return self._enum_label

    @property
    def filters(self):
        return self._filters

    @property
    def fill(self):
        fill = _default_fill(self._type, self._dtype, self._ncells) if self._fill is None else self._fill
        if self._dtype.kind in "iufcb":
            # As libtiledb gives it: an array of the cell's values.
            return np.atleast_1d(np.asarray(fill, dtype=self._dtype))
        return fill

    @fill.setter
    def fill(self, value):
        dtype = self._dtype
        if dtype.kind == "S":
            value = value if isinstance(value, bytes) else value.encode()
        elif dtype.kind == "U":
            value = value if isinstance(value, str) else value.encode()
        elif dtype.kind == "c":
            if getattr(value, "dtype", None) is not None and value.dtype.names and len(value.dtype.names) == 2:
                value = value[value.dtype.names[0]] + value[value.dtype.names[1]] * 1j
            elif hasattr(value, "__len__") and len(value) == 2:
                value = value[0] + value[1] * 1j
            value = np.asarray(value, dtype=dtype).reshape(-1)[0]
        else:
            value = np.array(value, dtype=dtype)[()] if dtype.kind != "V" else np.array(value, dtype=dtype)
        self._fill = value

    def __eq__(self, other):
        return isinstance(other, Attr) and self.to_json() == other.to_json()

    def __repr__(self):
        filters = f", filters={self._filters!r}" if len(self._filters) else ""
        var = ", var=True" if self.isvar and self._dtype.kind not in "SU" else ""
        nullable = ", nullable=True" if self._nullable else ""
        enum = f", enum_label={self._enum_label!r}" if self._enum_label else ""
        dtype = "ascii" if self.isascii else str(self._dtype)
        return f"Attr(name={self._name!r}, dtype='{dtype}'{var}{nullable}{enum}{filters})"

    def _repr_html_(self):
        return f"<table><tr><th>Name</th><th>Data Type</th><th>Is Var-Len</th><th>Is Nullable</th>" \
               f"<th>Filters</th></tr>{self._repr_html_row_only_()}</table>"

    def _repr_html_row_only_(self):
        filters = self._filters._repr_html_() if len(self._filters) else "-"
        return f"<tr><td>{self._name}</td><td>{'ascii' if self.isascii else self._dtype}</td>" \
               f"<td>{self.isvar}</td><td>{self._nullable}</td><td>{filters}</td></tr>"

    def dump(self):
        out = io.StringIO()
        out.write(f"### Attribute ###\n- Name: {self._name}\n- Type: {self._type}\n")
        out.write(f"- Nullable: {self._nullable}\n")
        out.write(f"- Cell val num: {'var' if self.isvar else self._ncells}\n")
        out.write(f"- Filters: {len(self._filters)}\n")
        out.write(f"- Fill value: {self.fill}\n")
        print(out.getvalue())

    def to_json(self):
        d = {"name": self._name, "type": self._type}
        if self._ncells != 1:
            d["cell_val_num"] = self._ncells
        if self._nullable:
            d["nullable"] = True
        if self._fill is not None:
            fill = self._fill
            if self._dtype.kind == "U" and isinstance(fill, str):
                d["fill_value"] = fill
            elif self._ncells not in (1, VAR_NUM) and self._dtype.kind not in "SUc":
                d["fill_value"] = [_values.to_json(v, self._dtype.fields[n][0]) for n, v in
                                   zip(self._dtype.names, np.asarray(fill, dtype=self._dtype)[()])]
            else:
                d["fill_value"] = _values.to_json(fill, self._dtype)
        if len(self._filters):
            d["filters"] = self._filters.to_json()
        if self._enum_label is not None:
            d["enumeration"] = self._enum_label
        return d

    @staticmethod
    def from_json(d):
        type_name = tiledb_name(d["type"])
        ncells = d.get("cell_val_num", 1)
        special = {"STRING_ASCII": "ascii", "BLOB": "blob", "GEOM_WKB": "wkb", "GEOM_WKT": "wkt"}
        if type_name in special:
            dtype = special[type_name]
        else:
            dtype = DataType.from_tiledb(type_name, ncells).np_dtype
        attr = Attr(d["name"], dtype, var=ncells == VAR_NUM, nullable=d.get("nullable", False),
                    filters=FilterList.from_json(d.get("filters", [])), enum_label=d.get("enumeration"))
        if "fill_value" in d:
            fill = d["fill_value"]
            try:
                attr._fill = _values.from_json(fill, attr._dtype) if not isinstance(fill, list) or \
                    attr._dtype.kind in "Vc" else _values.from_json(fill[0], attr._dtype)
            except (TypeError, ValueError):
                attr._fill = None
            if _same(attr._fill, _default_fill(attr._type, attr._dtype, attr._ncells)):
                attr._fill = None
        return attr


def _var_length(given, dt, var):
    """Whether an attribute of ``dt`` asked for with ``var`` is
    variable-length, as TileDB-Py decides (and warns): text always, bytes
    of no width too, blobs unless ``var=False``."""
    kind = dt.np_dtype.kind
    if kind == "U" or (var is None and given == "ascii"):
        return True
    if kind != "S" or given in ("ascii", "wkb", "wkt"):
        return var
    if given == "blob":
        return True if var is None else var
    if dt.np_dtype.itemsize > 0:
        if var:
            warnings.warn(f"Attr given `var=True` but `dtype` `{given}` is fixed; setting `dtype=S0`. Hint: set "
                          f"`var=True` with `dtype=S0`, or `var=False`with `dtype={given}`", DeprecationWarning,
                          stacklevel=3)
        return var
    if var is False:
        warnings.warn("Attr given `var=False` but `dtype` `S0` is var-length; setting `var=True` and `dtype=S0`. "
                      "Hint: set `var=False` with `dtype=S0`, or `var=False` with a fixed-width string "
                      "`dtype=S<n>` where is  n>1", DeprecationWarning, stacklevel=3)
    return True


def _default_fill(type_name, dtype, ncells):
    """libtiledb's fill value for a type: the lowest integer, NaN, the
    largest unsigned; for text, the lowest char (CHAR) or a zero byte."""
    if dtype.kind in "SU":
        if type_name == "CHAR":
            return b"\x80"
        return "\x00" if dtype.kind == "U" else b"\x00"
    if dtype.kind == "V":
        base = dtype.fields[dtype.names[0]][0]
        return np.array(tuple(_default_fill(type_name, base, 1) for _ in dtype.names), dtype=dtype)
    if dtype.kind == "c":
        return dtype.type(complex(np.nan, np.nan))
    if dtype.kind == "f":
        return dtype.type(np.nan)
    if dtype.kind == "i":
        return dtype.type(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return dtype.type(np.iinfo(dtype).max)
    if dtype.kind == "b":
        return np.bool_(False)
    if dtype.kind in "mM":
        return dtype.type(np.iinfo(np.int64).min, np.datetime_data(dtype)[0])
    return None


def _same(a, b):
    """Whether two fill values are the same (NaN the same as NaN)."""
    try:
        x, y = np.asarray(a), np.asarray(b)
        if x.dtype.kind in "fc" and y.dtype.kind in "fc":
            return bool(np.array_equal(x, y, equal_nan=True))
        return bool(np.array_equal(x, y))
    except (TypeError, ValueError):
        return False
