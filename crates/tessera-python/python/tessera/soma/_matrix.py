"""Sparse cells to scipy matrices. A CSR matrix is filled by the native
read itself where the array allows (2-D, int64 dimensions, no
duplicates): cells go straight into the matrix's arrays, a band of rows
at a time, with no COO copy. Otherwise cells come a batch at a time:
each batch's coordinates become positions of the index type (32-bit
where they fit) as soon as it arrives, so the 64-bit coordinates of the
whole read are never held together."""

import numpy as np

from tessera._convert import numbers

from . import _coords


class Positions:
    """Where joinids sit among the ascending ``ids`` (each value looked up
    is one of them), as ``index`` integers: a subtraction when the ids are
    a run of consecutive joinids; a table over their span when it is small
    (at most eight entries an id, or a million); else a binary search.
    Each writes its answer straight into a new array of ``index`` type (no
    64-bit temporary: at tens of millions of cells, fresh memory costs
    more than the arithmetic)."""

    def __init__(self, ids, index=np.int64):
        self.ids = ids
        self.index = index
        self.table = None
        span = int(ids[-1]) - int(ids[0]) + 1 if len(ids) else 0
        self.start = int(ids[0]) if len(ids) else 0
        self.run = len(ids) > 0 and span == len(ids)
        if len(ids) and not self.run and span <= max(8 * len(ids), 1 << 20):
            # Indexed from 0 where the span starts near it: no subtraction.
            if self.start <= span:
                span, self.start = span + self.start, 0
            self.table = np.zeros(span, dtype=index)
            self.table[ids - self.start] = np.arange(len(ids), dtype=index)

    def __call__(self, values):
        if self.run:
            out = np.empty(len(values), self.index)
            return np.subtract(values, self.start, out=out, casting="unsafe")
        if self.table is not None:
            return self.table[values - self.start if self.start else values]
        return np.searchsorted(self.ids, values).astype(self.index, copy=False)


def positions(ids, values):
    """Where each of ``values`` sits among the ascending ``ids``."""
    return Positions(ids)(values)


def coo(tables, shape, rows=None, cols=None):
    """The cells of ``tables`` (an iterable of tables or record batches of
    ``soma_dim_0``, ``soma_dim_1``, ``soma_data``) as COO columns: row and
    column positions (in ``rows`` / ``cols``, ascending joinids, where
    given; else the coordinates themselves) and the values."""
    index = _index_type(shape)
    parts = ([], [], [])
    dtype = None
    at_row = None if rows is None else Positions(rows, index)
    at_col = None if cols is None else Positions(cols, index)
    for t in tables:
        r = numbers(t.column("soma_dim_0"))
        c = numbers(t.column("soma_dim_1"))
        parts[0].append(r.astype(index, copy=False) if at_row is None else at_row(r))
        parts[1].append(c.astype(index, copy=False) if at_col is None else at_col(c))
        parts[2].append(numbers(t.column("soma_data")))
        dtype = parts[2][-1].dtype
    if not parts[2]:
        return np.zeros(0, index), np.zeros(0, index), np.zeros(0, dtype or np.float32)
    return tuple(np.concatenate(p) if len(p) > 1 else p[0] for p in parts)


def csr(array, coords, shape, rows=None, cols=None):
    """The cells of the SparseNDArray ``array`` at ``coords`` as a scipy
    CSR matrix of ``shape``, rows and columns at their positions among
    ``rows`` and ``cols`` (ascending joinids; ``None``: the coordinates
    themselves)."""
    import scipy.sparse

    index = _index_type(shape)
    filled = _filled(array, coords, shape, rows, cols, index)
    if filled is not None:
        return scipy.sparse.csr_matrix(filled, shape=shape)
    r, c, data = coo(array.read(coords).tables(), shape, rows, cols)
    return scipy.sparse.csr_matrix((data, (r, c)), shape=shape)


def window_csr(array, rows, cols):
    """The cells of ``array`` in rows ``rows`` and columns ``cols``
    (ascending joinids) as a CSR matrix indexed by their positions."""
    whole_rows = len(rows) == array.shape[0] and (len(rows) == 0 or rows[-1] == len(rows) - 1)
    whole_cols = len(cols) == array.shape[1] and (len(cols) == 0 or cols[-1] == len(cols) - 1)
    by = (None if whole_rows else rows, None if whole_cols else cols)
    return csr(array, by, (len(rows), len(cols)), *by)


def _index_type(shape):
    return np.int32 if max(shape, default=0) < np.iinfo(np.int32).max else np.int64


def _filled(array, coords, shape, rows, cols, index):
    """``(data, indices, indptr)`` read by the native side straight into
    the matrix's arrays (numpy arrays over the bytearrays it fills), or
    ``None`` where it does not take the array."""
    dtype = np.dtype(array.schema.field("soma_data").type.to_pandas_dtype())
    subarray = _coords.subarray(coords, array._dims(), array._current())
    if subarray is None:
        return np.zeros(0, dtype), np.zeros(0, index), np.zeros(shape[0] + 1, index)
    ids = [None if i is None else np.ascontiguousarray(i, dtype="<i8").tobytes() for i in (rows, cols)]
    try:
        data, indices, indptr = array._array._native.csr(
            subarray, ids[0], ids[1], "soma_data", shape[0], np.dtype(index).itemsize, _coords.BATCH_BYTES)
    except NotImplementedError:
        return None
    indptr = np.frombuffer(indptr, "<i8")
    if index is np.int32 and indptr[-1] < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    return np.frombuffer(data, dtype), np.frombuffer(indices, index), indptr
