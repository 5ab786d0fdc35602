"""Matrices (scipy CSR/CSC, numpy, and their backed forms in an open
``.h5ad``) written into SOMA arrays a chunk of rows (or, for CSC, of
columns) at a time: each chunk read from the file and turned into cells at
the joinids its positions map to. Rows that come in joinid order go to
``tessera_soma::BandWriter``, which sorts a band of rows (one tile of
``soma_dim_0``) at a time into the global order and writes one fragment;
other cells (CSC, rows out of order) go to tessera's fragment writer,
which sorts them and writes a fragment whenever its memory budget fills.
Nothing holds more than a chunk and a band, or the budget."""

import math

import numpy as np
import pyarrow as pa

from tessera import _native
from tessera._convert import storage_pairs

from ._errors import SOMAValueError

# Cells a chunk holds at most, and the memory a write may hold (bytes):
# a fragment is written whenever its cells outgrow a third of the budget.
# Measured on a 100,000 x 2,000 file: chunks of 250,000 cells (about 15
# MiB of COO arrays, joinids and Arrow columns) peak 70 MiB below chunks
# of a million, in the same time.
GOAL_CHUNK_NNZ = 250_000
WRITE_BUDGET = 128 << 20


def soma_type(matrix):
    """The Arrow type of ``soma_data`` for ``matrix`` (float16 widened)."""
    dtype = np.dtype(matrix.dtype)
    if dtype == np.float16:
        dtype = np.dtype(np.float32)
    return pa.from_numpy_dtype(dtype)


def _is_csc(matrix):
    fmt = getattr(matrix, "format", None) or getattr(matrix, "format_str", None)
    return fmt == "csc" or type(matrix).__name__ in ("CSCDataset", "_CSCDataset")


def _is_sparse(matrix):
    return hasattr(matrix, "format") or type(matrix).__name__ in (
        "CSRDataset", "CSCDataset", "_CSRDataset", "_CSCDataset")


def _indptr(matrix):
    """The compressed axis' pointers, where they can be had without reading
    the data (in memory, or one small array of the file)."""
    if hasattr(matrix, "indptr"):
        return np.asarray(matrix.indptr)
    group = getattr(matrix, "group", None)
    if group is not None and "indptr" in group:
        return np.asarray(group["indptr"][...])
    return None


def chunks(matrix, goal_nnz=None):
    """``(axis, start, coo)`` for consecutive chunks along the matrix's
    stride axis (rows; columns for CSC), each a scipy COO matrix of at
    most about ``goal_nnz`` cells (a dense chunk: its non-zero cells)."""
    import scipy.sparse as sp

    goal_nnz = goal_nnz or GOAL_CHUNK_NNZ
    axis = 1 if _is_csc(matrix) else 0
    length, other = matrix.shape[axis], matrix.shape[1 - axis]
    indptr = _indptr(matrix) if _is_sparse(matrix) else None
    start = 0
    while start < length:
        if indptr is not None:
            # As many rows as fit the goal from here, at least one.
            stop = int(np.searchsorted(indptr, indptr[start] + goal_nnz, side="right")) - 1
            stop = min(max(stop, start + 1), length)
        else:
            stop = min(length, start + max(1, math.ceil(goal_nnz / max(other, 1))))
        box = (slice(start, stop), slice(None)) if axis == 0 else (slice(None), slice(start, stop))
        chunk = matrix[box]
        if sp.issparse(chunk):
            coo = chunk.tocoo()
        else:
            coo = sp.coo_matrix(np.asarray(chunk))
        yield axis, start, coo
        start = stop


def cells(matrix, type, row_joinids=None, col_joinids=None, goal_nnz=None):
    """Record batches of ``soma_dim_0``, ``soma_dim_1`` and ``soma_data``
    for the stored cells of ``matrix``, positions mapped through the
    joinid arrays (identity where ``None``)."""
    for axis, start, coo in chunks(matrix, goal_nnz):
        rows = coo.row.astype(np.int64)
        cols = coo.col.astype(np.int64)
        if axis == 0:
            rows += start
        else:
            cols += start
        if row_joinids is not None:
            rows = row_joinids[rows]
        if col_joinids is not None:
            cols = col_joinids[cols]
        data = pa.array(np.asarray(coo.data)).cast(type)
        yield pa.record_batch([pa.array(rows), pa.array(cols), data],
                              names=["soma_dim_0", "soma_dim_1", "soma_data"])


def write_sparse(array, matrix, row_joinids=None, col_joinids=None, budget=None):
    """Writes the stored cells of ``matrix`` into the SparseNDArray
    ``array`` through one fragment writer (several fragments past its
    ``budget``, committed together)."""
    array.verify_open_for_writing()
    for axis, (joinids, n) in enumerate(zip((row_joinids, col_joinids), matrix.shape)):
        top = (int(joinids.max()) if len(joinids) else -1) if joinids is not None else n - 1
        if top >= array.shape[axis]:
            raise SOMAValueError(f"{array.uri}: soma_dim_{axis} reaches {top}, outside the shape {array.shape}: "
                                 "resize the array (or prepare the experiment) first")
    t = pa.from_numpy_dtype(array._array.schema.attrs[0].dtype)
    schema = pa.schema([("soma_dim_0", pa.int64()), ("soma_dim_1", pa.int64()), ("soma_data", t)])
    reader = pa.RecordBatchReader.from_batches(schema, cells(matrix, t, row_joinids, col_joinids))
    if _in_row_order(matrix, row_joinids):
        # Rows come in order: one fragment, a band of rows sorted at a time.
        fragments = _native.write_bands(array.uri, reader, storage_pairs(array._options))
    else:
        budget = budget or WRITE_BUDGET
        fragments = _native.write(array.uri, reader, None, None, budget, None, storage_pairs(array._options))
    array._reopen()
    return fragments


def _in_row_order(matrix, row_joinids):
    """Whether a matrix's cells come row after row, in joinid order: read
    by rows (not CSC) and its rows' joinids never decreasing."""
    if _is_csc(matrix) or len(matrix.shape) != 2:
        return False
    return row_joinids is None or len(row_joinids) < 2 or bool(np.all(np.diff(row_joinids) >= 0))


def write_dense(array, matrix, goal_nnz=None):
    """Writes ``matrix`` (2-D, or 1-D) into the DenseNDArray ``array`` a
    band of rows at a time, each band a box write."""
    rows = matrix.shape[0]
    width = matrix.shape[1] if len(matrix.shape) == 2 else 1
    step = max(1, math.ceil((goal_nnz or GOAL_CHUNK_NNZ) / max(width, 1)))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        band = matrix[start:stop]
        band = band.toarray() if hasattr(band, "toarray") else np.asarray(band)
        if band.dtype == np.float16:
            band = band.astype(np.float32)
        coords = (slice(start, stop - 1),) + ((slice(0, width - 1),) if len(matrix.shape) == 2 else ())
        array.write(coords, band)
