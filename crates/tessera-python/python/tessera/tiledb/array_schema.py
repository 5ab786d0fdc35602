"""``ArraySchema``: an array's domain, attributes, orders and filters,
in the schema's JSON form (``docs/SCHEMA_JSON.md``) when it is created
or read."""

import io
import json

import warnings

import numpy as np

from .attribute import Attr
from .domain import Domain
from .dimension import Dim
from .dimension_label import DimLabel
from .enumeration import Enumeration
from .filter import FilterList, ZstdFilter, RleFilter, filter_list
from .libtiledb import TileDBError

_ORDERS = {"row-major": "row-major", "C": "row-major", "col-major": "col-major", "F": "col-major",
           "global": "global", "hilbert": "hilbert", "unordered": "unordered", "U": "unordered"}


class ArraySchema:
    """An array's schema, as TileDB-Py builds it: ``domain``, ``attrs``,
    ``cell_order``, ``tile_order``, ``capacity``, filters for coordinates,
    offsets and validity, ``allows_duplicates``, ``sparse``, ``enums``."""

    def __init__(self, domain=None, attrs=(), cell_order="row-major", tile_order="row-major", capacity=0,
                 coords_filters=None, offsets_filters=None, validity_filters=None, allows_duplicates=False,
                 sparse=False, dim_labels=None, enums=None, ctx=None):
        if domain is None or not isinstance(domain, Domain):
            raise TileDBError("ArraySchema: a Domain is required")
        attrs = list(attrs or ())
        if not all(isinstance(a, Attr) for a in attrs):
            raise TypeError("ArraySchema attrs must be Attr objects")
        if tile_order is None:
            # A Hilbert cell order has no tile order (TileDB-Py takes None).
            tile_order = "row-major"
        if cell_order not in _ORDERS or tile_order not in _ORDERS:
            raise ValueError(f"unknown tiledb layout: {cell_order if cell_order not in _ORDERS else tile_order}")
        names = [a.name for a in attrs] + [d.name for d in domain]
        dupes = {n for n in names if names.count(n) > 1 and n}
        if dupes:
            raise TileDBError(f"ArraySchema: field name {sorted(dupes)[0]!r} is used twice")
        if allows_duplicates and not sparse:
            raise TileDBError("ArraySchema: dense arrays cannot allow duplicates")
        self._domain = domain
        self._attrs = attrs
        self._cell_order = _ORDERS[cell_order]
        self._tile_order = _ORDERS[tile_order]
        self._capacity = int(capacity)
        self._coords_filters = None
        if coords_filters is not None:
            # As TileDB-Py: warned about, and given to the dimensions
            # without filters of their own.
            warnings.warn("coords_filters is deprecated; set the FilterList for each dimension",
                          DeprecationWarning, stacklevel=2)
            for d in domain:
                if not d._filters:
                    d._filters = filter_list(coords_filters)
            self._coords_filters = FilterList()
        self._offsets_filters = None if offsets_filters is None else filter_list(offsets_filters)
        self._validity_filters = None if validity_filters is None else filter_list(validity_filters)
        self._allows_duplicates = bool(allows_duplicates)
        self._sparse = bool(sparse)
        self._enums = list(enums or [])
        self._set_labels(_labels_json(dim_labels, domain))
        self._current_domain = None
        self._version = None

    @classmethod
    def load(cls, uri, ctx=None, key=None):
        from ._open import open_native

        return cls.from_json(open_native(uri, ctx=ctx, key=key).schema_json())._anchored(str(uri))

    @property
    def sparse(self):
        return self._sparse

    @property
    def allows_duplicates(self):
        return self._allows_duplicates

    @property
    def capacity(self):
        return self._capacity or 10000

    @property
    def cell_order(self):
        return self._cell_order

    @property
    def tile_order(self):
        return None if self._cell_order == "hilbert" else self._tile_order

    @property
    def coords_filters(self):
        return self._coords_filters if self._coords_filters is not None else FilterList([ZstdFilter(level=-1)])

    @coords_filters.setter
    def coords_filters(self, value):
        raise TileDBError("coords_filters is deprecated; set the filter on each dimension")

    @property
    def offsets_filters(self):
        return self._offsets_filters if self._offsets_filters is not None else FilterList([ZstdFilter(level=-1)])

    @property
    def validity_filters(self):
        return self._validity_filters if self._validity_filters is not None else FilterList([RleFilter(level=-1)])

    @property
    def domain(self):
        return self._domain

    @property
    def nattr(self):
        return len(self._attrs)

    @property
    def ndim(self):
        return self._domain.ndim

    @property
    def shape(self):
        return self._domain.shape

    @property
    def version(self):
        return self._version if self._version is not None else 22

    @property
    def attr_names(self):
        return [a.name for a in self._attrs]

    @property
    def enums(self):
        return list(self._enums)

    def enum(self, name):
        for e in self._enums:
            if e.name == name:
                return e
        raise TileDBError(f"ArraySchema: Unable to check if unknown enumeration is loaded. No enumeration named "
                          f"{name!r}.")

    def attr(self, key):
        if isinstance(key, str):
            for a in self._attrs:
                if a.name == key:
                    return a
            raise TileDBError(f"ArraySchema: no attribute named {key!r}")
        if not isinstance(key, (int, np.integer)):
            raise TypeError("attr indices must be a string name, or an integer index")
        if not -len(self._attrs) <= key < len(self._attrs):
            raise TileDBError(f"ArraySchema: no attribute at index {key}")
        return self._attrs[key]

    def has_attr(self, name):
        return any(a.name == name for a in self._attrs)

    def has_dim_label(self, name):
        return name in self._dim_labels

    def dim_label(self, name):
        """The :class:`DimLabel` named ``name``."""
        if name not in self._dim_labels:
            raise TileDBError(f"ArraySchema: no dimension label named {name!r}")
        return self._dim_labels[name]

    def _set_labels(self, labels_json):
        """The dimension labels from their JSON form (a list)."""
        self._label_json = list(labels_json)
        self._dim_labels = {x["name"]: DimLabel.from_json(x) for x in self._label_json}

    def _anchored(self, array_uri):
        """This schema as read from the array at ``array_uri``: its labels'
        URIs joined to the array's."""
        self._dim_labels = {n: label._anchored(array_uri) for n, label in self._dim_labels.items()}
        return self

    def attr_or_dim_dtype(self, name):
        if self.has_attr(name):
            return self.attr(name).dtype
        return self._domain.dim(name).dtype

    @property
    def current_domain(self):
        from .current_domain import CurrentDomain

        return self._current_domain if self._current_domain is not None else CurrentDomain()

    def set_current_domain(self, current_domain):
        self._current_domain = current_domain

    def check(self):
        """Raises :class:`TileDBError` if the schema is not one an array can have."""
        from tessera import _native

        try:
            _native.check_schema(json.dumps(self.to_json()))
        except Exception as e:
            raise TileDBError(str(e)) from None
        return True

    def __len__(self):
        return len(self._attrs)

    def __iter__(self):
        return iter(self._attrs)

    def __eq__(self, other):
        if not isinstance(other, ArraySchema):
            return False
        return self._canonical() == other._canonical()

    def _canonical(self):
        """The JSON form with every default spelled out, so that a schema
        built by hand equals the one an array created from it reads."""
        d = self.to_json()
        d["capacity"] = self.capacity if self._sparse else None
        d["allows_duplicates"] = self._allows_duplicates
        d["tile_order"] = self.tile_order
        for key in ("coords_filters", "offsets_filters", "validity_filters"):
            d[key] = getattr(self, key).to_json()
        for dim in d["dimensions"]:
            if "tile_extent" not in dim and "domain" in dim and not self._sparse:
                lo, hi = dim["domain"]
                dim["tile_extent"] = hi - lo + 1 if isinstance(lo, int) else None
        return d

    def __repr__(self):
        dims = ",\n".join(f"    {d!r}" for d in self._domain)
        attrs = ",\n".join(f"    {a!r}" for a in self._attrs)
        return (f"ArraySchema(\n  domain=Domain(*[\n{dims},\n  ]),\n  attrs=[\n{attrs},\n  ],\n"
                f"  cell_order='{self.cell_order}',\n  tile_order={self.tile_order!r},\n"
                + (f"  capacity={self.capacity},\n" if self._sparse else "")
                + f"  sparse={self._sparse},\n"
                + (f"  allows_duplicates={self._allows_duplicates},\n" if self._sparse else "") + ")\n")

    def _repr_html_(self):
        return f"<table><tr><th>Domain</th></tr><tr><td>{self._domain._repr_html_()}</td></tr>" \
               f"<tr><th>Attributes</th></tr><tr><td><table>" \
               + "".join(a._repr_html_row_only_() for a in self._attrs) + "</table></td></tr></table>"

    def dump(self):
        out = io.StringIO()
        out.write(f"- Array type: {'sparse' if self._sparse else 'dense'}\n")
        out.write(f"- Cell order: {self.cell_order}\n- Tile order: {self.tile_order}\n")
        out.write(f"- Capacity: {self.capacity}\n- Allows duplicates: {self._allows_duplicates}\n")
        for d in self._domain:
            out.write(f"### Dimension ###\n- Name: {d.name}\n- Type: {d._type}\n- Domain: {d.domain}\n")
        for a in self._attrs:
            out.write(f"### Attribute ###\n- Name: {a.name}\n- Type: {a._type}\n")
        print(out.getvalue())

    def to_json(self):
        d = {"array_type": "sparse" if self._sparse else "dense",
             "cell_order": self._cell_order, "tile_order": self._tile_order,
             "dimensions": [dim.to_json() for dim in self._domain],
             "attributes": [a.to_json() for a in self._attrs]}
        if self._sparse:
            d["capacity"] = self.capacity
            d["allows_duplicates"] = self._allows_duplicates
        for key, value in (("coords_filters", self._coords_filters), ("offsets_filters", self._offsets_filters),
                           ("validity_filters", self._validity_filters)):
            if value is not None:
                d[key] = value.to_json()
        if self._enums:
            d["enumerations"] = [e.to_json() for e in self._enums]
        if self._current_domain is not None and not self._current_domain.is_empty:
            d["current_domain"] = self._current_domain.to_json()
        if self._label_json:
            d["dimension_labels"] = list(self._label_json)
        return d

    @staticmethod
    def from_json(d):
        if isinstance(d, str):
            d = json.loads(d)
        domain = Domain(*[Dim.from_json(x) for x in d["dimensions"]])
        attrs = [Attr.from_json(a) for a in d.get("attributes", [])]
        schema = ArraySchema(domain, attrs, cell_order=d.get("cell_order", "row-major"),
                             tile_order=d.get("tile_order", "row-major"), capacity=d.get("capacity", 10000),
                             offsets_filters=_filters(d, "offsets_filters"),
                             validity_filters=_filters(d, "validity_filters"),
                             allows_duplicates=d.get("allows_duplicates", False),
                             sparse=d.get("array_type") == "sparse",
                             enums=[Enumeration.from_json(e) for e in d.get("enumerations", [])])
        coords = _filters(d, "coords_filters")
        # Stored coordinate filters are read, not asked for: no warning.
        schema._coords_filters = None if coords is None else filter_list(coords)
        if d.get("current_domain"):
            from .current_domain import CurrentDomain

            schema._current_domain = CurrentDomain.from_json(d["current_domain"], domain)
        schema._version = d.get("format_version")
        schema._set_labels(d.get("dimension_labels", []))
        return schema


def _labels_json(dim_labels, domain):
    """``{dimension index: {name: DimLabelSchema}}`` in the JSON form: a
    list, each label at ``__labels/l<i>`` in the array, as libtiledb
    names them."""
    labels = []
    for index, by_name in (dim_labels or {}).items():
        if not 0 <= int(index) < domain.ndim:
            raise TileDBError(f"ArraySchema: cannot add a label to dimension {index}; the domain has "
                              f"{domain.ndim} dimensions")
        for name, label_schema in by_name.items():
            if any(x["name"] == name for x in labels):
                raise TileDBError(f"ArraySchema: dimension label {name!r} is defined twice")
            d = label_schema._to_json(int(index), name, domain.dim(int(index)))
            d["uri"] = f"__labels/l{len(labels)}"
            labels.append(d)
    return labels


def _filters(d, key):
    return FilterList.from_json(d[key]) if key in d else None
