"""An axis query's selection as an AnnData object, as tiledbsoma builds it."""

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tessera._convert import numbers

from ._arrays import DenseNDArray, SparseNDArray
from ._dask import x_array
from ._errors import SOMANotImplementedError, SOMAValueError
from ._matrix import positions, window_csr


def build(query, X_name, column_names, X_layers, obsm_layers, obsp_layers, varm_layers,
          varp_layers, drop_levels, obs_id_name, var_id_name, dask=None):
    import anndata

    ms = query._ms
    names = [n for n in [X_name, *X_layers] if n is not None]
    for n in names:
        if n not in ms.X:
            raise SOMAValueError(f"{ms.uri}: no X layer {n!r}")
        if not isinstance(ms.X[n], SparseNDArray):
            raise SOMANotImplementedError(f"{ms.uri}: X layer {n!r} is dense; to_anndata reads sparse layers")
    # Reads wait on round trips on object stores (and release the GIL):
    # obs, var and their joinids are read side by side, the two frames
    # opened first so that no two reads open one; X as soon as the
    # joinids are known, while the frames finish.
    with ThreadPoolExecutor(max_workers=4) as pool:
        for opened in [pool.submit(query._frame, a) for a in ("obs", "var")]:
            opened.result()
        obs = pool.submit(_frame, query, "obs", column_names.get("obs"), obs_id_name, "obs_id")
        var = pool.submit(_frame, query, "var", column_names.get("var"), var_id_name, "var_id")
        obs_ids, var_ids = pool.submit(query.obs_joinids), pool.submit(query.var_joinids)
        obs_ids, var_ids = numbers(obs_ids.result()), numbers(var_ids.result())
        if dask:
            # Planned here, read on the workers.
            matrices = {n: x_array(ms.X[n], obs_ids, var_ids, **dask) for n in names}
        else:
            matrices = {n: window_csr(ms.X[n], obs_ids, var_ids) for n in names}
        obs, var = obs.result(), var.result()
    X = matrices.pop(X_name) if X_name is not None else None
    if drop_levels:
        for frame in (obs, var):
            for name in frame:
                if frame[name].dtype.name == "category":
                    frame[name] = frame[name].cat.remove_unused_categories()
    return anndata.AnnData(
        X=X,
        obs=obs,
        var=var,
        obsm={k: _rows(_layer(ms, "obsm", k), obs_ids) for k in obsm_layers} or None,
        varm={k: _rows(_layer(ms, "varm", k), var_ids) for k in varm_layers} or None,
        obsp={k: window_csr(_layer(ms, "obsp", k), obs_ids, obs_ids) for k in obsp_layers} or None,
        varp={k: window_csr(_layer(ms, "varp", k), var_ids, var_ids) for k in varp_layers} or None,
        layers=matrices,
    )


def _layer(ms, collection, name):
    if collection not in ms or name not in ms[collection]:
        raise SOMAValueError(f"{ms.uri}: no {collection} layer {name!r}")
    return ms[collection][name]


def _frame(query, axis, column_names, id_name, fallback):
    table = query._axis(axis, column_names).concat()
    return indexed(table.to_pandas(), query._frame(axis), id_name, fallback)


def indexed(frame, source, id_name, fallback):
    """``frame`` (read from the SOMA DataFrame ``source``) indexed as
    tiledbsoma indexes it: by ``id_name``, else by the index name the
    source's metadata keeps, else by ``fallback`` if a column (the index
    then unnamed)."""
    name = id_name or original_index_name(source)
    if name is not None:
        if name not in frame:
            raise SOMAValueError(f"requested ID column {name} is not a column: {list(frame.keys())}")
        frame.set_index(name, inplace=True)
    elif fallback in frame:
        frame.set_index(fallback, inplace=True)
        frame.index.name = None
    return frame


def original_index_name(frame):
    """The index name a DataFrame's metadata keeps (``None`` if none)."""
    raw = frame.metadata.get("soma_dataframe_original_index_name", "null")
    name = json.loads(raw) if isinstance(raw, str) else raw
    if not (name is None or isinstance(name, str)):
        raise SOMAValueError(f"{frame.uri}: soma_dataframe_original_index_name is {raw!r}, not a name")
    return name


def _rows(array, ids):
    """Rows ``ids`` of an obsm/varm matrix as a dense numpy array."""
    if isinstance(array, DenseNDArray):
        if len(ids) == 0:
            return np.zeros((0, array.shape[1]), dtype=array.schema.field("soma_data").type.to_pandas_dtype())
        box = array.read((slice(int(ids[0]), int(ids[-1])),)).to_numpy()
        return box[ids - ids[0]]
    table = array.read((ids,)).tables().concat()
    out = np.zeros((len(ids), array.shape[1]), dtype=table.schema.field("soma_data").type.to_pandas_dtype())
    out[positions(ids, numbers(table.column("soma_dim_0"))),
        numbers(table.column("soma_dim_1"))] = numbers(table.column("soma_data"))
    return out
