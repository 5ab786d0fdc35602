"""Blockwise reads of a 2-D SparseNDArray: blocks of coordinates along one
axis, each as a scipy matrix or a table, coordinates reindexed to
positions (``[0, N)`` in the block along the axis, ``[0, M)`` among all
coordinates read on the other)."""

import numpy as np
import pyarrow as pa

from tessera._convert import numbers

from . import _coords
from ._errors import SOMANotImplementedError, SOMAValueError
from ._matrix import coo, csr, positions

_DEFAULT_SIZE = (2**16, 2**8)


class BlockwiseRead:
    def __init__(self, read, axis, size, reindex_disable_on_axis):
        array = read._array
        if array.ndim != 2:
            raise SOMANotImplementedError(f"{array.uri}: blockwise reads take 2-D arrays, not {array.ndim}-D")
        if axis not in (0, 1):
            raise SOMAValueError(f"axis {axis} of a 2-D array")
        self._read = read
        self.axis = axis
        self.size = int(size) if size is not None else _DEFAULT_SIZE[axis]
        if reindex_disable_on_axis is None:
            reindex_disable_on_axis = ()
        elif isinstance(reindex_disable_on_axis, int):
            reindex_disable_on_axis = (reindex_disable_on_axis,)
        self.reindex_disable_on_axis = tuple(reindex_disable_on_axis)
        self._ids = _axis_ids(array, read.coords)

    def _block_ids(self):
        """Per block, its joinids on each axis."""
        major = self._ids[self.axis]
        for start in range(0, len(major), self.size):
            ids = [None, None]
            ids[self.axis] = major[start:start + self.size]
            ids[1 - self.axis] = self._ids[1 - self.axis]
            yield ids

    def tables(self):
        """Per block, ``(table, (ids_0, ids_1))`` with coordinates reindexed."""
        array = self._read._array
        for ids in self._block_ids():
            table = array.read(tuple(ids)).tables().concat()
            dims = [self._position(d, ids, numbers(table.column(d))) for d in (0, 1)]
            out = pa.table({"soma_dim_0": dims[0], "soma_dim_1": dims[1],
                            "soma_data": table.column("soma_data")})
            yield out, (ids[0], ids[1])

    def scipy(self, *, compress=True):
        """Per block, ``(matrix, (ids_0, ids_1))``: a CSR matrix (CSC along
        axis 1; COO with ``compress=False``) and the joinids of its rows and
        columns."""
        import scipy.sparse

        array = self._read._array
        for ids in self._block_ids():
            shape = tuple(array.shape[d] if d in self.reindex_disable_on_axis else len(ids[d]) for d in (0, 1))
            by = [None if d in self.reindex_disable_on_axis else ids[d] for d in (0, 1)]
            if compress and self.axis == 0:
                yield csr(array, tuple(ids), shape, *by), (ids[0], ids[1])
                continue
            r, c, data = coo(array.read(tuple(ids)).tables(), shape, *by)
            m = scipy.sparse.coo_matrix((data, (r, c)), shape=shape)
            if compress:
                m = m.tocsc()
            yield m, (ids[0], ids[1])

    def _position(self, d, ids, values):
        if d in self.reindex_disable_on_axis:
            return values
        return positions(ids[d], values)


def _axis_ids(array, coords):
    """Per axis, the joinids ``coords`` selects, ascending (as the read
    takes them: slices cut to the domain in force)."""
    subarray = _coords.subarray(coords, array._dims(), array._current())
    if subarray is None:
        return [np.zeros(0, np.int64), np.zeros(0, np.int64)]
    out = []
    for d, extent in zip(array._dims(), array.shape):
        ranges = subarray.get(d.name)
        if ranges is None:
            out.append(np.arange(extent, dtype=np.int64))
        else:
            out.append(np.concatenate([np.arange(a, b + 1, dtype=np.int64) for a, b in ranges]))
    return out
