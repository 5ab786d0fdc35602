"""``Dim``: one dimension of an array's domain."""

import numpy as np

from . import _values
from .datatypes import DataType, tiledb_name
from .dimension_label import DimLabelSchema
from .filter import filter_list


class Dim:
    """A dimension: ``name``, ``domain`` ``(lo, hi)`` (the type's whole
    range when left out), ``tile`` extent, ``filters`` and ``dtype``;
    bytes and strings make a variable-length ``STRING_ASCII`` dimension
    with no domain."""

    def __init__(self, name="__dim_0", domain=None, tile=None, filters=None, dtype=np.uint64, var=None, ctx=None):
        dt = DataType.from_numpy(dtype)
        dtype = dt.np_dtype
        if dtype.kind not in "iufMmSU":
            raise TypeError(f"invalid Dim dtype {dtype!r}")
        if var and dtype.kind not in "SU":
            raise TypeError("'var=True' specified for non-str/bytes dtype")
        if domain is not None and len(domain) != 2:
            raise ValueError("invalid domain extent, must be a pair")
        self._name = name
        self._filters = filter_list(filters) if filters is not None else None
        if dtype.kind in "SU":
            self._type, self._dtype, self._domain, self._tile = "STRING_ASCII", np.dtype("S"), None, None
            return
        self._type, self._dtype = dt.tiledb_type, dtype
        if domain is None or tuple(domain) == (None, None):
            domain = dt.domain
        else:
            lo, hi = dt.domain
            try:
                ok = lo <= domain[0] <= hi and lo <= domain[1] <= hi
            except TypeError:
                ok = False
            if not ok:
                raise TypeError(f"invalid domain extent, domain cannot be safely cast to dtype {dtype!r}")
        bounds = np.asarray(domain, dtype=dtype)
        self._domain = (bounds[0], bounds[1])
        if tile is not None:
            if isinstance(tile, np.timedelta64):
                tile = tile / np.timedelta64(1, np.datetime_data(dtype)[0])
            t = np.array(tile, dtype=np.int64 if dtype.kind in "mM" else dtype)
            if t.size != 1:
                raise ValueError("tile extent must be a scalar")
            tile = t[()]
        self._tile = tile

    @property
    def name(self):
        return self._name

    def _renamed(self, name):
        import copy

        out = copy.copy(self)
        out._name = name
        return out

    @property
    def isanon(self):
        return self._name in ("", "__dim_0")

    @property
    def dtype(self):
        return self._dtype

    @property
    def isvar(self):
        return self._type == "STRING_ASCII"

    @property
    def domain(self):
        if self._domain is None:
            return (None, None)
        return self._domain

    @property
    def tile(self):
        if self._tile is None:
            return None
        if self._dtype.kind in "mM":
            return np.timedelta64(int(self._tile), np.datetime_data(self._dtype)[0])
        return self._dtype.type(self._tile)

    def create_label_schema(self, order="increasing", dtype=np.uint64, tile=None, filters=None):
        """A :class:`DimLabelSchema` for a label on this dimension (its
        label array's tile extent this dimension's unless ``tile``)."""
        if tile is None and self.tile is not None and self.tile != 0:
            tile = self.tile
        return DimLabelSchema(order, dtype, self.dtype, tile, filters)

    @property
    def filters(self):
        from .filter import FilterList

        return self._filters if self._filters is not None else FilterList()

    @property
    def shape(self):
        if self._dtype.kind not in "iumM":
            raise TypeError("shape only valid for integer and datetime dimension domains")
        lo, hi = (int(np.asarray(v).astype(np.int64)) for v in self.domain)
        return (hi - lo + 1,)

    @property
    def size(self):
        return self.shape[0]

    def __eq__(self, other):
        return isinstance(other, Dim) and self.to_json() == other.to_json()

    def __repr__(self):
        var = ", var=True" if self.isvar else ""
        filters = f", filters={self._filters!r}" if self._filters else ""
        dom = "(None, None)" if self._domain is None else f"({self._domain[0]!s}, {self._domain[1]!s})"
        return f"Dim(name={self._name!r}, domain={dom}, tile={self.tile!r}, dtype='{self._dtype!s}'{var}{filters})"

    def _repr_html_(self):
        return f"<table><tr><th>Name</th><th>Domain</th><th>Tile</th><th>Data Type</th><th>Is Var-Len</th>" \
               f"<th>Filters</th></tr>{self._repr_html_row_only_()}</table>"

    def _repr_html_row_only_(self):
        filters = self._filters._repr_html_() if self._filters else "-"
        return f"<tr><td>{self._name}</td><td>{self.domain}</td><td>{self.tile}</td><td>{self._dtype}</td>" \
               f"<td>{self.isvar}</td><td>{filters}</td></tr>"

    def to_json(self):
        d = {"name": self._name, "type": self._type}
        if self._domain is not None:
            d["domain"] = [_values.to_json(v, self._dtype) for v in self._domain]
        if self._tile is not None:
            d["tile_extent"] = _values.to_json(self._tile, np.int64 if self._dtype.kind in "mM" else self._dtype)
        if self._filters is not None and len(self._filters):
            d["filters"] = self._filters.to_json()
        return d

    @staticmethod
    def from_json(d):
        from .filter import FilterList

        type_name = tiledb_name(d["type"])
        if type_name in ("STRING_ASCII", "CHAR", "STRING_UTF8"):
            dim = Dim(d["name"], dtype="ascii")
        else:
            dtype = DataType.from_tiledb(type_name).np_dtype
            domain = tuple(_values.from_json(v, dtype) for v in d["domain"])
            tile = d.get("tile_extent")
            tile = None if tile is None else _values.from_json(tile, np.int64 if dtype.kind in "mM" else dtype)
            dim = Dim(d["name"], domain, tile, dtype=dtype)
        if d.get("filters"):
            dim._filters = FilterList.from_json(d["filters"])
        return dim
