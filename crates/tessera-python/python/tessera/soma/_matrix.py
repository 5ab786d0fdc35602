"""Sparse cells to scipy matrices, a batch at a time: each batch's
coordinates become positions of the index type (32-bit where they fit)
as soon as it arrives, so the 64-bit coordinates of the whole read are
never held together."""

import numpy as np


def positions(ids, values):
    """Where each of ``values`` sits among the ascending ``ids``: a
    subtraction when the ids are a run of consecutive joinids."""
    if len(ids) and int(ids[-1]) - int(ids[0]) + 1 == len(ids):
        return values - ids[0]
    return np.searchsorted(ids, values)


def coo(tables, shape, rows=None, cols=None):
    """The cells of ``tables`` (an iterable of tables or record batches of
    ``soma_dim_0``, ``soma_dim_1``, ``soma_data``) as COO columns: row and
    column positions (in ``rows`` / ``cols``, ascending joinids, where
    given; else the coordinates themselves) and the values."""
    index = np.int32 if max(shape, default=0) < np.iinfo(np.int32).max else np.int64
    parts = ([], [], [])
    dtype = None
    for t in tables:
        r = t.column("soma_dim_0").to_numpy()
        c = t.column("soma_dim_1").to_numpy()
        parts[0].append((r if rows is None else positions(rows, r)).astype(index, copy=False))
        parts[1].append((c if cols is None else positions(cols, c)).astype(index, copy=False))
        parts[2].append(t.column("soma_data").to_numpy())
        dtype = parts[2][-1].dtype
    if not parts[2]:
        return np.zeros(0, index), np.zeros(0, index), np.zeros(0, dtype or np.float32)
    return tuple(np.concatenate(p) if len(p) > 1 else p[0] for p in parts)


def csr(tables, shape, rows=None, cols=None):
    """The cells of ``tables`` as a scipy CSR matrix of ``shape`` (see :func:`coo`)."""
    import scipy.sparse

    r, c, data = coo(tables, shape, rows, cols)
    return scipy.sparse.csr_matrix((data, (r, c)), shape=shape)
