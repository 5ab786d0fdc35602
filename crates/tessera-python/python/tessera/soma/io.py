"""Whole experiments to other forms, as ``tiledbsoma.io`` does."""

from ._anndata import indexed
from ._matrix import csr
from ._arrays import DenseNDArray


def to_anndata(experiment, measurement_name, X_layer_name="data", *, extra_X_layer_names=None,
               obs_id_name=None, var_id_name=None, obsm_varm_width_hints=None, uns_keys=None):
    """The whole of ``measurement_name`` as an ``anndata.AnnData``: obs
    and var (without ``soma_joinid``, indexed as tiledbsoma indexes them),
    X from ``X_layer_name`` (a CSR matrix, or numpy for a dense layer),
    more layers from ``extra_X_layer_names``, and every obsm, varm, obsp
    and varp matrix the measurement has. ``uns`` is not read."""
    import anndata

    if measurement_name not in experiment.ms:
        raise ValueError(f"{experiment.uri}: no measurement {measurement_name!r}")
    ms = experiment.ms[measurement_name]
    obs = _dataframe(experiment.obs, obs_id_name, "obs_id")
    var = _dataframe(ms.var, var_id_name, "var_id")
    shape = (len(obs.index), len(var.index))
    for name in [X_layer_name, *(extra_X_layer_names or ())]:
        if name is not None and name not in ms.X:
            raise ValueError(f"{ms.uri}: no X layer {name!r} (layers: {', '.join(ms.X.keys())})")
    X = _matrix(ms.X[X_layer_name], shape) if X_layer_name is not None else None
    layers = {n: _matrix(ms.X[n], shape) for n in (extra_X_layer_names or ()) if n != X_layer_name}
    hints = obsm_varm_width_hints or {}
    return anndata.AnnData(
        X=X,
        obs=obs,
        var=var,
        obsm=_each(ms, "obsm", lambda a, k: _dense(a, shape[0], hints.get("obsm", {}).get(k))),
        varm=_each(ms, "varm", lambda a, k: _dense(a, shape[1], hints.get("varm", {}).get(k))),
        obsp=_each(ms, "obsp", lambda a, k: csr(a, (), (shape[0], shape[0]))),
        varp=_each(ms, "varp", lambda a, k: csr(a, (), (shape[1], shape[1]))),
        layers=layers,
    )


def _dataframe(frame, id_name, fallback):
    columns = [n for n in frame.keys() if n != "soma_joinid"]
    return indexed(frame.read(column_names=columns).concat().to_pandas(), frame, id_name, fallback)


def _matrix(array, shape):
    if isinstance(array, DenseNDArray):
        return array.read((slice(None), slice(None))).to_numpy()
    return csr(array, (), shape)


def _dense(array, rows, width):
    """An obsm/varm matrix as numpy: a dense array as stored, a sparse one
    ``rows`` by its width (given, else its shape's)."""
    if isinstance(array, DenseNDArray):
        return array.read().to_numpy()
    return csr(array, (), (rows, width or array.shape[1])).toarray()


def _each(ms, collection, read):
    if collection not in ms:
        return None
    return {k: read(ms[collection][k], k) for k in ms[collection].keys()} or None
