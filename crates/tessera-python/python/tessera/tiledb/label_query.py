"""Reading and writing through dimension labels, as libtiledb does: a
label's data is the ``label`` attribute of a dense array under the
array's ``__labels/`` folder, indexed by the labelled dimension. A range
of labels selects the indices whose labels fall in it (the labels are
sorted, so both ends are found by binary search); writing labels writes
that array over the indices the array's write covers."""

import json

import numpy as np
import pyarrow as pa

from tessera import _native

from ._open import errors, open_native
from .ctx import storage
from .libtiledb import TileDBError


class LabelData:
    """A label's labels over its array's non-empty domain: ``index`` (the
    labelled dimension's coordinates, ascending) and ``values``."""

    def __init__(self, label, ctx=None, key=None, timestamp=None):
        self.label = label
        native = open_native(label.uri, ctx, key, timestamp)
        ned = json.loads(native.nonempty_domain_json())
        self.index = np.array([], dtype=np.int64)
        self.values = np.array([], dtype=object if label.isvar else label.dtype)
        if ned is None:
            return
        lo, hi = ned[0]
        reader = errors(native.reader, attrs=[label.label_attr_name], subarray={"index": [(lo, hi)]},
                        condition=None, layout=None, dims=True, budget=1 << 30, enum_values=False,
                        ascii_as_binary=True)
        table = reader.read_all()
        self.index = table.column("index").to_numpy()
        column = table.column(label.label_attr_name)
        if label.isvar:
            self.values = np.array([v.encode() if isinstance(v, str) else v for v in column.to_pylist()],
                                   dtype=object)
        else:
            values = column.to_numpy()
            self.values = values.astype(label.dtype) if label.dtype.kind in "mM" else values

    def _value(self, v):
        """``v`` comparable with the labels."""
        if self.label.isvar:
            return v.encode() if isinstance(v, str) else bytes(v)
        return np.asarray(v).astype(self.values.dtype)[()]

    def index_range(self, lo, hi):
        """The indices ``(first, last)`` whose labels lie in ``[lo, hi]``;
        :class:`TileDBError` when none does."""
        lo, hi = self._value(lo), self._value(hi)
        n = len(self.values)
        if self.label.order == "increasing":
            first = int(np.searchsorted(self.values, lo, side="left"))
            last = int(np.searchsorted(self.values, hi, side="right")) - 1
        else:
            backwards = self.values[::-1]
            first = n - int(np.searchsorted(backwards, hi, side="right"))
            last = n - 1 - int(np.searchsorted(backwards, lo, side="left"))
        if n == 0 or first > last or first >= n or last < 0:
            raise TileDBError(f"dimension label {self.label.name!r}: the range [{lo!r}, {hi!r}] contains no label")
        return self.index[first].item(), self.index[last].item()

    def labels_at(self, ranges):
        """The labels of the indices in ``ranges`` (inclusive, in order)."""
        if len(self.index) == 0:
            return self.values[:0]
        base = int(self.index[0])
        parts = [self.values[int(lo) - base:int(hi) - base + 1] for lo, hi in ranges]
        return np.concatenate(parts) if parts else self.values[:0]


def label_ranges_of(selection):
    """The label ranges one dimension's selection gives: a slice (both
    ends required) or ``(lo, hi)`` is one range, a scalar one point, a
    list one point each."""
    if isinstance(selection, slice):
        if selection.start is None or selection.stop is None:
            raise NotImplementedError("partial and full indexing is not yet supported on dimension labels")
        return [(selection.start, selection.stop)]
    if isinstance(selection, tuple) and len(selection) == 2:
        return [tuple(selection)]
    if isinstance(selection, (list, np.ndarray)):
        return [(x, x) for x in selection]
    return [(selection, selection)]


def write_labels(schema, values, index_ranges, timestamp, ctx=None, key=None):
    """Writes each label's ``values`` (by label name) over the indices
    its dimension's write covers: ``index_ranges[dim]`` is ``(lo, hi)``,
    or the coordinates a sparse write gives (consecutive)."""
    for name, data in values.items():
        label = schema.dim_label(name)
        lo, hi = _one_range(index_ranges[label.dim_index], name)
        data = np.asarray(data) if not isinstance(data, (list, np.ndarray)) else data
        if len(data) != hi - lo + 1:
            raise TileDBError(f"dimension label {name!r}: {len(data)} labels for the {hi - lo + 1} indices "
                              f"[{lo}, {hi}] written")
        column = _label_column(data, label)
        label_uri = label.uri
        errors(_native.write, label_uri, pa.table({label.label_attr_name: column}), timestamp, key, None,
               [(int(lo), int(hi))], storage(label_uri, ctx))


def _one_range(index, name):
    """``(lo, hi)``: a range, or the consecutive coordinates of a sparse write."""
    if isinstance(index, tuple) and len(index) == 2 and np.isscalar(index[0]):
        return int(np.asarray(index[0]).astype(np.int64)), int(np.asarray(index[1]).astype(np.int64))
    points = np.asarray(index).astype(np.int64)
    if len(points) == 0 or np.any(np.diff(points) != 1):
        raise TileDBError(f"dimension label {name!r}: The dimension data must contain consecutive points "
                          "when writing to a dimension label")
    return int(points[0]), int(points[-1])


def _label_column(data, label):
    """Labels as the Arrow column a write of the label array takes."""
    if label.isvar:
        return pa.array([v.decode() if isinstance(v, bytes) else str(v) for v in data], type=pa.large_string())
    arr = np.asarray(data, dtype=label.dtype)
    return pa.array(arr.astype(np.int64) if arr.dtype.kind in "mM" else arr)


def resolved_ranges(array, dim_ranges, label_ranges, cache=None):
    """Per dimension, index ranges: ``dim_ranges`` with each labelled
    dimension's ranges found from ``label_ranges`` (by label name)."""
    out = list(dim_ranges)
    for name, ranges in label_ranges.items():
        data = label_data(array, name, cache)
        out[data.label.dim_index] = [data.index_range(lo, hi) for lo, hi in ranges]
    return out


def label_data(array, name, cache=None):
    """The :class:`LabelData` of the open ``array``'s label ``name``
    (read once per ``cache``)."""
    if cache is not None and name in cache:
        return cache[name]
    label = array.schema.dim_label(name)
    timestamp = array._timestamp if array.mode == "r" else None
    data = LabelData(label, array._ctx, array._key, timestamp)
    if cache is not None:
        cache[name] = data
    return data
