"""``Subarray``: ranges per dimension for ``A.read_subarray`` and
``A.write_subarray`` (a dimension given none spans its domain)."""

import numpy as np

from ._values import extent, native_bound
from .libtiledb import TileDBError


def _cast(value, dim):
    """``value`` as a coordinate of ``dim``, or :class:`TileDBError` when
    it is not one (a float for an integer dimension, text for a number)."""
    kind = dim.dtype.kind
    if dim.isvar:
        if isinstance(value, (str, bytes)):
            return value
    elif kind in "iu":
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return value
    elif kind == "f":
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
            return value
    elif kind in "mM":
        if isinstance(value, (np.datetime64, int, np.integer)):
            return value
    raise TypeError(value)


class Subarray:
    """Ranges on an open array's dimensions (see the module)."""

    def __init__(self, array, ctx=None):
        self._array = array
        self._ranges = [None] * array.schema.ndim
        # Ranges of labels by label name; their dimension's ranges are
        # found from them when the subarray is read.
        self._label_ranges = {}

    def _dim(self, index):
        return self._array.schema.domain.dim(index)

    def add_dim_range(self, dim_idx, dim_range):
        """Adds the inclusive ``(lo, hi)`` on dimension ``dim_idx`` (the
        first replaces the whole domain)."""
        dim = self._dim(dim_idx)
        lo, hi = dim_range
        try:
            pair = (_cast(lo, dim), _cast(hi, dim))
        except TypeError:
            name = dim._type
            raise TileDBError(f"Failed to cast dim range '{tuple(dim_range)!r}' to dim type {name}") from None
        index = list(self._array.schema.domain).index(dim)
        if self._ranges[index] is None:
            self._ranges[index] = []
        self._ranges[index].append(pair)

    def add_ranges(self, dim_ranges=(), label_ranges=None):
        """Adds, per dimension in order, a list of ``(lo, hi)`` ranges,
        and ``{label name: ranges}``."""
        for i, ranges in enumerate(dim_ranges):
            for r in ranges:
                self.add_dim_range(i, r)
        for name, ranges in (label_ranges or {}).items():
            for r in ranges:
                self.add_label_range(name, r)

    def get_range(self, dim_idx, range_idx):
        """Range ``range_idx`` on dimension ``dim_idx``: ``[start, end,
        stride]`` (stride 0), ``[start, end]`` on a string dimension."""
        dim = self._dim(dim_idx)
        ranges = self.ranges()[dim_idx]
        if not 0 <= range_idx < len(ranges):
            raise TileDBError(f"Subarray.get_range: dimension {dim.name!r} has no range {range_idx} "
                              f"({len(ranges)} ranges)")
        lo, hi = ranges[range_idx]
        if dim.isvar:
            return [lo.decode() if isinstance(lo, bytes) else lo, hi.decode() if isinstance(hi, bytes) else hi]
        return [lo, hi, 0]

    def copy_ranges(self, other, dims):
        """Takes the ranges ``other`` has on dimensions ``dims``."""
        for i in dims:
            self._ranges[i] = None if other._ranges[i] is None else list(other._ranges[i])

    def add_label_range(self, name, label_range):
        """Adds the inclusive ``(lo, hi)`` of label ``name``: its dimension
        then spans the indices whose labels it holds."""
        label = self._array.schema.dim_label(name)
        other = [n for n in self._label_ranges if n != name and
                 self._array.schema.dim_label(n).dim_index == label.dim_index]
        if other:
            raise TileDBError(f"Subarray: dimension {label.dim_index} already has ranges of label {other[0]!r}")
        self._ranges[label.dim_index] = []
        self._label_ranges.setdefault(name, []).append(tuple(label_range))

    def num_label_ranges(self, name):
        return len(self._label_ranges.get(name, []))

    def has_label_range(self, dim_idx):
        return any(self._array.schema.dim_label(n).dim_index == dim_idx for n in self._label_ranges)

    def num_dim_ranges(self, index):
        ranges = self._ranges[index if isinstance(index, int) else
                              [d.name for d in self._array.schema.domain].index(index)]
        return 1 if ranges is None else len(ranges)

    def ranges(self):
        """Per dimension, its ranges (the domain where none was added)."""
        return [r if r is not None else [tuple(d.domain)] for r, d in zip(self._ranges, self._array.schema.domain)]

    def shape(self):
        out = []
        for ranges, d in zip(self.ranges(), self._array.schema.domain):
            if d.isvar or d.dtype.kind == "f":
                raise TileDBError(f"Subarray.shape: dimension {d.name!r} has no integer extent")
            out.append(sum(extent(native_bound(lo, d), native_bound(hi, d)) for lo, hi in ranges))
        return tuple(out)
