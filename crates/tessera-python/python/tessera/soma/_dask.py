"""X layers as Dask arrays of CSR blocks, as tiledbsoma's ``dask=``
argument (``SOMADaskConfig``: ``chunk_size``, ``tiledb_config``) gives
them: blocks of ``chunk_size`` rows (all columns), or of ``(rows,
columns)`` (``rows`` ``None``: all), each read on a Dask worker from the
layer opened again there (a SOMA object pickles as what reopens it)."""

import numpy as np

from ._arrays import SparseNDArray
from ._errors import SOMANotImplementedError, SOMAValueError
from ._matrix import window_csr


def x_array(layer, obs_ids=None, var_ids=None, *, chunk_size=None, tiledb_config=None, format="csr"):
    """The cells of the SparseNDArray ``layer`` in rows ``obs_ids`` and
    columns ``var_ids`` (ascending joinids; ``None``: every one in the
    layer's shape) as a ``dask.array.Array`` of scipy CSR (``format="csc"``:
    CSC) blocks, rows and columns at their positions among the ids."""
    import dask.array as da
    import scipy.sparse
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    if chunk_size is None:
        raise SOMAValueError("chunk_size required (directly or via `dask=`)")
    if not isinstance(layer, SparseNDArray):
        raise SOMANotImplementedError(f"{layer.uri}: Dask-loading is implemented for sparse layers only")
    if format not in ("csr", "csc"):
        raise SOMAValueError(f"format {format!r}: expected 'csr' or 'csc'")
    if tiledb_config:
        layer = layer._with_config(tiledb_config)
    n_obs, n_var = layer.shape
    obs_ids = np.arange(n_obs, dtype=np.int64) if obs_ids is None else np.asarray(obs_ids, dtype=np.int64)
    var_ids = np.arange(n_var, dtype=np.int64) if var_ids is None else np.asarray(var_ids, dtype=np.int64)
    if isinstance(chunk_size, int):
        obs_size, var_size = chunk_size, len(var_ids)
    else:
        obs_size, var_size = chunk_size
        obs_size = obs_size or len(obs_ids)
    obs_chunks, var_chunks = _split(obs_ids, obs_size), _split(var_ids, var_size)
    name = "tessera-soma-x-" + tokenize(layer.uri, repr(layer._reopen_timestamp()), obs_ids, var_ids,
                                        obs_size, var_size, format)
    graph = {
        (name, i, j): (_block, layer, rows, cols, format)
        for i, rows in enumerate(obs_chunks)
        for j, cols in enumerate(var_chunks)
    }
    dtype = np.dtype(layer.schema.field("soma_data").type.to_pandas_dtype())
    meta = (scipy.sparse.csr_matrix if format == "csr" else scipy.sparse.csc_matrix)((0, 0), dtype=dtype)
    chunks = (tuple(len(c) for c in obs_chunks) or (0,), tuple(len(c) for c in var_chunks) or (0,))
    if not obs_chunks or not var_chunks:
        return da.from_array(np.zeros((len(obs_ids), len(var_ids)), dtype), chunks=chunks)
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=())
    return da.Array(hlg, name, chunks, meta=meta)


def _split(ids, size):
    return [ids[i:i + size] for i in range(0, len(ids), max(1, int(size)))]


def _block(layer, rows, cols, format):
    """One block: the cells in rows ``rows`` and columns ``cols``, at
    their positions among them."""
    block = window_csr(layer, rows, cols)
    return block if format == "csr" else block.tocsc()
