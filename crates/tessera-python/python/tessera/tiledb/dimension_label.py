"""Dimension labels: ``DimLabelSchema`` (what an ``ArraySchema``'s
``dim_labels`` give: a label's order, datatype, and its label array's tile
extent and filters) and ``DimLabel`` (a label of a schema: its name, the
dimension it labels, and the URI of the array holding its data)."""

import numpy as np

from . import _values
from .datatypes import DataType
from .filter import FilterList
from .libtiledb import TileDBError

ORDERS = ("increasing", "decreasing")


def _label_type(label_dtype):
    """A label's DataType: text (bytes, str, ``"ascii"``) as STRING_ASCII."""
    dt = DataType.from_numpy(label_dtype if isinstance(label_dtype, str) and label_dtype in ("ascii", "blob")
                             else np.dtype(label_dtype))
    if dt.np_dtype.kind in "SU":
        return DataType(np.dtype("S"), "STRING_ASCII", "var")
    return dt


class DimLabelSchema:
    """A dimension label to add to a schema: ``order`` (``"increasing"``
    or ``"decreasing"``), ``label_dtype``, the labelled dimension's
    ``dim_dtype``, the label array's tile extent ``dim_tile`` (None: the
    dimension's) and ``label_filters``."""

    def __init__(self, order="increasing", label_dtype=np.uint64, dim_dtype=np.uint64, dim_tile=None,
                 label_filters=None, ctx=None):
        if order not in ORDERS:
            raise KeyError(order)
        self._order = order
        self._label = _label_type(label_dtype)
        self._dim = DataType.from_numpy(dim_dtype)
        if dim_tile is not None:
            if self._dim.np_dtype.kind in "SU":
                raise TypeError("invalid tile extent, cannot set a tile a string dimension")
            dim_tile = np.array(dim_tile, dtype=np.int64 if self._dim.np_dtype.kind in "mM" else
                                self._dim.np_dtype)[()]
        self._tile = dim_tile
        if label_filters is not None and not isinstance(label_filters, FilterList):
            label_filters = FilterList(label_filters)
        self._filters = label_filters

    @property
    def label_order(self):
        return self._order

    @property
    def label_dtype(self):
        return self._label.np_dtype

    @property
    def dim_dtype(self):
        return self._dim.np_dtype

    @property
    def dim_tile(self):
        return self._tile

    @property
    def label_filters(self):
        return self._filters

    def _to_json(self, dim_index, name, dim):
        """The label as the schema's JSON form lists it, on ``dim``."""
        if dim.dtype != self.dim_dtype:
            raise TileDBError(f"dimension label {name!r}: its dimension type {self.dim_dtype} is not the type "
                              f"of dimension {dim.name!r} ({dim.dtype})")
        d = {"dimension": dim_index, "name": name, "order": self._order, "type": self._label.tiledb_type}
        if self._tile is not None:
            d["tile_extent"] = _values.to_json(self._tile, np.int64 if dim.dtype.kind in "mM" else dim.dtype)
        if self._filters is not None and len(self._filters):
            d["filters"] = self._filters.to_json()
        return d


class DimLabel:
    """A dimension label of a schema."""

    def __init__(self, name, dim_index, label_type, order, uri, label_attr_name="label"):
        self._name = name
        self._dim_index = dim_index
        self._type = label_type
        self._order = order
        self._uri = uri
        self._label_attr_name = label_attr_name

    @classmethod
    def from_json(cls, d):
        return cls(d["name"], d["dimension"], d["type"], d.get("order", "increasing"), d["uri"],
                   d.get("attribute", "label"))

    def _anchored(self, array_uri):
        """This label with its URI joined to the array's (``__labels/l0``
        is stored relative to it)."""
        uri = array_uri.rstrip("/") + "/" + self._uri if self._uri.startswith("__labels/") else self._uri
        return DimLabel(self._name, self._dim_index, self._type, self._order, uri, self._label_attr_name)

    @property
    def name(self):
        return self._name

    @property
    def dim_index(self):
        return self._dim_index

    @property
    def dtype(self):
        return DataType.from_tiledb(self._type).np_dtype

    @property
    def isvar(self):
        return self._type == "STRING_ASCII"

    @property
    def isascii(self):
        return self._type == "STRING_ASCII"

    @property
    def label_attr_name(self):
        return self._label_attr_name

    @property
    def order(self):
        return self._order

    @property
    def uri(self):
        return self._uri

    def __eq__(self, other):
        return isinstance(other, DimLabel) and (self._name, self._dim_index, self._type, self._order) == \
            (other._name, other._dim_index, other._type, other._order)

    def __repr__(self):
        dtype = "ascii" if self.isascii else self.dtype
        return f"DimLabel(name={self._name}, dtype='{dtype!s}', var={self.isvar!s}, order={self._order})"
