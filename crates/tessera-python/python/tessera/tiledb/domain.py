"""``Domain``: an array's dimensions."""

import numpy as np

from .dimension import Dim
from .libtiledb import TileDBError


class Domain:
    """The dimensions of an array, in order: ``Domain(dim, ...)``."""

    def __init__(self, *dims, ctx=None):
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        if not dims:
            raise TileDBError("Domain must have ndim >= 1")
        if not all(isinstance(d, Dim) for d in dims):
            raise TypeError("Domain takes Dim objects")
        if len(dims) > 1:
            if all(d.name == "__dim_0" for d in dims):
                # Anonymous dimensions are numbered in order.
                dims = [d._renamed(f"__dim_{i}") for i, d in enumerate(dims)]
            elif any(d.name.startswith("__dim_0") for d in dims[1:]):
                raise TileDBError("Mixed dimension naming: dimensions must be either all anonymous or all named.")
        self._dims = list(dims)

    @property
    def ndim(self):
        return len(self._dims)

    @property
    def dtype(self):
        return self._dims[0].dtype

    @property
    def homogeneous(self):
        return len({d.dtype for d in self._dims}) == 1

    @property
    def shape(self):
        return tuple(d.shape[0] for d in self._dims)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def dim(self, index):
        if isinstance(index, str):
            for d in self._dims:
                if d.name == index:
                    return d
            raise TileDBError(f"Domain: no dimension named {index!r}")
        if not isinstance(index, (int, np.integer)):
            raise ValueError("Unsupported dim identifier: '{!r}' (expected int or str)".format(index))
        if not -len(self._dims) <= index < len(self._dims):
            raise TileDBError(f"Domain: no dimension at index {index}")
        return self._dims[index]

    def has_dim(self, name):
        return any(d.name == name for d in self._dims)

    def __iter__(self):
        return iter(self._dims)

    def __len__(self):
        return len(self._dims)

    def __eq__(self, other):
        return isinstance(other, Domain) and self._dims == other._dims

    def __repr__(self):
        inner = ",\n".join(f"  {d!r}" for d in self._dims)
        return f"Domain(*[\n{inner},\n])"

    def _repr_html_(self):
        rows = "".join(d._repr_html_row_only_() for d in self._dims)
        return f"<table><tr><th>Name</th><th>Domain</th><th>Tile</th><th>Data Type</th><th>Is Var-Len</th>" \
               f"<th>Filters</th></tr>{rows}</table>"

    def dump(self):
        print(repr(self))
