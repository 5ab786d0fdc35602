"""Schemas as Python objects over the schema's JSON form
(docs/SCHEMA_JSON.md): what ``tessera schema --json`` prints and
``tessera.create`` takes.

    >>> s = Schema(sparse=True, dims=[Dimension("x", "INT64", (0, 99))],
    ...            attrs=[Attribute("v", "FLOAT64", filters=[Filter("zstd", level=3)])])
    >>> Schema.from_json(s.to_json()) == s
    True
"""

import json

import numpy as np

# TileDB datatype names and the numpy dtypes TileDB-Py gives their cells.
_NUMPY = {
    "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64",
    "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32", "UINT64": "uint64",
    "FLOAT32": "float32", "FLOAT64": "float64", "BOOL": "bool",
    "STRING_ASCII": "S", "CHAR": "S", "STRING_UTF8": "U", "BLOB": "V",
}
_DATETIME = {
    "DATETIME_YEAR": "Y", "DATETIME_MONTH": "M", "DATETIME_WEEK": "W", "DATETIME_DAY": "D",
    "DATETIME_HR": "h", "DATETIME_MIN": "m", "DATETIME_SEC": "s", "DATETIME_MS": "ms",
    "DATETIME_US": "us", "DATETIME_NS": "ns", "DATETIME_PS": "ps", "DATETIME_FS": "fs",
    "DATETIME_AS": "as",
}


def numpy_dtype(type_name):
    """The numpy dtype of a TileDB datatype's values (``DATETIME_MS`` ->
    ``datetime64[ms]``; TIME_* and other types: their integer width)."""
    t = type_name.upper().removeprefix("TILEDB_")
    if t in _DATETIME:
        return np.dtype(f"datetime64[{_DATETIME[t]}]")
    if t.startswith("TIME_"):
        return np.dtype("int64")
    return np.dtype(_NUMPY.get(t, "V"))


class Filter:
    """One filter of a pipeline: its name (``"zstd"``) and options (``level=3``)."""

    def __init__(self, name, **options):
        self.name = name
        self.options = options

    def to_json(self):
        return {"name": self.name, **self.options}

    @classmethod
    def from_json(cls, d):
        d = dict(d)
        return cls(d.pop("name"), **d)

    def __eq__(self, other):
        return isinstance(other, Filter) and self.to_json() == other.to_json()

    def __repr__(self):
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"Filter({self.name!r}{opts})"


def _filters_json(filters):
    return [f.to_json() if isinstance(f, Filter) else f for f in filters]


class _Field:
    _json_keys = ()

    def __eq__(self, other):
        return type(self) is type(other) and self.to_json() == other.to_json()

    @property
    def dtype(self):
        """The numpy dtype TileDB-Py gives this field's values."""
        return numpy_dtype(self.type)


class Dimension(_Field):
    """A dimension: ``name``, ``type`` (TileDB's name, ``"INT64"``),
    ``domain`` ``(lo, hi)`` (``None`` for strings), ``tile`` extent, ``filters``."""

    def __init__(self, name, type="INT64", domain=None, tile=None, filters=(), extra=None):
        self.name, self.type = name, type
        self.domain = tuple(domain) if domain is not None else None
        self.tile = tile
        self.filters = [Filter.from_json(f) if isinstance(f, dict) else f for f in filters]
        self._extra = dict(extra or {})

    @property
    def isvar(self):
        return self._extra.get("cell_val_num") == "var" or self.domain is None

    def to_json(self):
        d = {"name": self.name, "type": self.type, **self._extra}
        if self.domain is not None:
            d["domain"] = list(self.domain)
        if self.tile is not None:
            d["tile_extent"] = self.tile
        if self.filters:
            d["filters"] = _filters_json(self.filters)
        return d

    @classmethod
    def from_json(cls, d):
        d = dict(d)
        return cls(d.pop("name"), d.pop("type"), d.pop("domain", None), d.pop("tile_extent", None),
                   d.pop("filters", ()), extra=d)

    def __repr__(self):
        return f"Dimension({self.name!r}, {self.type!r}, domain={self.domain!r}, tile={self.tile!r})"


class Attribute(_Field):
    """An attribute: ``name``, ``type``, ``var`` (var-sized cells), ``ncells``
    (values per cell otherwise), ``nullable``, ``fill``, ``filters``,
    ``enum_label`` (the enumeration its keys index)."""

    def __init__(self, name, type="FLOAT64", var=False, ncells=1, nullable=False, fill=None,
                 filters=(), enum_label=None, extra=None):
        self.name, self.type = name, type
        self.var, self.ncells, self.nullable = var, (None if var else ncells), nullable
        self.fill, self.enum_label = fill, enum_label
        self.filters = [Filter.from_json(f) if isinstance(f, dict) else f for f in filters]
        self._extra = dict(extra or {})

    @property
    def isvar(self):
        return self.var

    @property
    def isnullable(self):
        return self.nullable

    def to_json(self):
        d = {"name": self.name, "type": self.type, **self._extra}
        if self.var:
            d["cell_val_num"] = "var"
        elif self.ncells != 1:
            d["cell_val_num"] = self.ncells
        if self.nullable:
            d["nullable"] = True
        if self.fill is not None:
            d["fill_value"] = self.fill
        if self.filters:
            d["filters"] = _filters_json(self.filters)
        if self.enum_label is not None:
            d["enumeration"] = self.enum_label
        return d

    @classmethod
    def from_json(cls, d):
        d = dict(d)
        cvn = d.pop("cell_val_num", 1)
        return cls(d.pop("name"), d.pop("type"), var=cvn == "var", ncells=1 if cvn == "var" else cvn,
                   nullable=d.pop("nullable", False), fill=d.pop("fill_value", None),
                   filters=d.pop("filters", ()), enum_label=d.pop("enumeration", None), extra=d)

    def __repr__(self):
        return f"Attribute({self.name!r}, {self.type!r}, var={self.var}, nullable={self.nullable})"


class Schema:
    """An array schema: ``sparse``, ``dims``, ``attrs``, ``cell_order``,
    ``tile_order``, ``capacity``, ``allows_duplicates``, ``enumerations``
    (``{name: [values]}``) and the rest of the JSON form."""

    def __init__(self, dims, attrs=(), sparse=False, cell_order="row-major", tile_order="row-major",
                 capacity=None, allows_duplicates=False, enumerations=None, extra=None):
        self.dims, self.attrs, self.sparse = list(dims), list(attrs), sparse
        self.cell_order, self.tile_order = cell_order, tile_order
        self.capacity, self.allows_duplicates = capacity, allows_duplicates
        self.enumerations = list(enumerations or [])
        self._extra = dict(extra or {})

    @property
    def ndim(self):
        return len(self.dims)

    @property
    def nattr(self):
        return len(self.attrs)

    def dim(self, key):
        return self.dims[key] if isinstance(key, int) else next(d for d in self.dims if d.name == key)

    def attr(self, key):
        return self.attrs[key] if isinstance(key, int) else next(a for a in self.attrs if a.name == key)

    def has_attr(self, name):
        return any(a.name == name for a in self.attrs)

    def to_json(self):
        d = {"array_type": "sparse" if self.sparse else "dense", "cell_order": self.cell_order,
             "tile_order": self.tile_order, **self._extra,
             "dimensions": [x.to_json() for x in self.dims],
             "attributes": [x.to_json() for x in self.attrs]}
        if self.capacity is not None:
            d["capacity"] = self.capacity
        if self.sparse:
            d["allows_duplicates"] = self.allows_duplicates
        if self.enumerations:
            d["enumerations"] = self.enumerations
        return d

    @classmethod
    def from_json(cls, d):
        if isinstance(d, str):
            d = json.loads(d)
        d = dict(d)
        return cls([Dimension.from_json(x) for x in d.pop("dimensions")],
                   [Attribute.from_json(x) for x in d.pop("attributes", [])],
                   sparse=d.pop("array_type") == "sparse", cell_order=d.pop("cell_order", "row-major"),
                   tile_order=d.pop("tile_order", "row-major"), capacity=d.pop("capacity", None),
                   allows_duplicates=d.pop("allows_duplicates", False),
                   enumerations=d.pop("enumerations", None), extra=d)

    def __eq__(self, other):
        return isinstance(other, Schema) and self.to_json() == other.to_json()

    def __repr__(self):
        kind = "sparse" if self.sparse else "dense"
        return f"Schema({kind}, dims={[d.name for d in self.dims]}, attrs={[a.name for a in self.attrs]})"
