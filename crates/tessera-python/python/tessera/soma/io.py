"""Whole experiments to and from other forms, as ``tiledbsoma.io`` does:
``from_h5ad`` and ``from_anndata`` write experiments, ``to_anndata``
reads them."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._anndata import indexed
from ._arrays import DataFrame, DenseNDArray, SparseNDArray
from ._collection import Collection
from ._dask import x_array
from ._distributed import from_h5ads
from ._errors import SOMAError, SOMAValueError
from ._ingest import from_anndata, from_h5ad
from ._matrix import csr
from ._registration import ExperimentAmbientLabelMapping, register_anndatas, register_h5ads
from ._shaping import get_experiment_shapes, resize_experiment
from ._update import add_matrix_to_collection, add_X_layer, update_matrix, update_obs, update_var

__all__ = [
    "ExperimentAmbientLabelMapping",
    "add_X_layer",
    "add_matrix_to_collection",
    "from_anndata",
    "from_h5ad",
    "from_h5ads",
    "get_experiment_shapes",
    "register_anndatas",
    "register_h5ads",
    "resize_experiment",
    "to_anndata",
    "to_h5ad",
    "update_matrix",
    "update_obs",
    "update_var",
]


def to_anndata(experiment, measurement_name, X_layer_name="data", *, extra_X_layer_names=None,
               obs_id_name=None, var_id_name=None, obsm_varm_width_hints=None, uns_keys=None, dask=None):
    """The whole of ``measurement_name`` as an ``anndata.AnnData``: obs
    and var (without ``soma_joinid``, indexed as tiledbsoma indexes them),
    X from ``X_layer_name`` (a CSR matrix, or numpy for a dense layer),
    more layers from ``extra_X_layer_names``, every obsm, varm, obsp and
    varp matrix the measurement has, and its ``uns`` (only the top-level
    keys ``uns_keys`` names, if given). With ``dask`` (tiledbsoma's
    ``SOMADaskConfig``), X and the layers are Dask arrays of CSR blocks
    over each layer's shape, read on the workers."""
    import anndata

    if measurement_name not in experiment.ms:
        raise SOMAValueError(f"{experiment.uri}: no measurement {measurement_name!r}")
    ms = experiment.ms[measurement_name]
    names = [n for n in [X_layer_name, *(extra_X_layer_names or ())] if n is not None]
    for name in names:
        if name not in ms.X:
            raise SOMAValueError(f"{ms.uri}: no X layer {name!r} (layers: {', '.join(ms.X.keys())})")
    # Members open here, each once; their reads wait on round trips on
    # object stores (and release the GIL), so they run side by side: the
    # frames and uns first, the matrices once the frames give the shape.
    layers = {n: ms.X[n] for n in dict.fromkeys(names)}
    pairs = {c: {k: ms[c][k] for k in ms[c].keys()} for c in ("obsm", "varm", "obsp", "varp") if c in ms}
    hints = obsm_varm_width_hints or {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        obs = pool.submit(_dataframe, experiment.obs, obs_id_name, "obs_id")
        var = pool.submit(_dataframe, ms.var, var_id_name, "var_id")
        uns = pool.submit(_uns, ms["uns"], uns_keys) if "uns" in ms else None
        obs, var = obs.result(), var.result()
        shape = (len(obs.index), len(var.index))
        reads = {
            "obsm": lambda a, k: _dense(a, shape[0], hints.get("obsm", {}).get(k)),
            "varm": lambda a, k: _dense(a, shape[1], hints.get("varm", {}).get(k)),
            "obsp": lambda a, k: csr(a, (), (shape[0], shape[0])),
            "varp": lambda a, k: csr(a, (), (shape[1], shape[1])),
        }
        matrices = {n: pool.submit(_matrix, a, shape, dask) for n, a in layers.items()}
        pending = {c: {k: pool.submit(reads[c], a, k) for k, a in arrays.items()} for c, arrays in pairs.items()}
        matrices = {n: m.result() for n, m in matrices.items()}
        done = {c: {k: f.result() for k, f in arrays.items()} or None for c, arrays in pending.items()}
        uns = uns.result() if uns is not None else {}
    X = matrices.get(X_layer_name) if X_layer_name is not None else None
    return anndata.AnnData(
        X=X,
        obs=obs,
        var=var,
        obsm=done.get("obsm"),
        varm=done.get("varm"),
        obsp=done.get("obsp"),
        varp=done.get("varp"),
        layers={n: m for n, m in matrices.items() if n != X_layer_name},
        uns=uns,
    )


def to_h5ad(experiment, h5ad_path, measurement_name, *, X_layer_name="data", obs_id_name=None, var_id_name=None,
            obsm_varm_width_hints=None, uns_keys=None):
    """Writes the measurement as :func:`to_anndata` reads it into the
    ``.h5ad`` file at ``h5ad_path``."""
    adata = to_anndata(experiment, measurement_name, X_layer_name, obs_id_name=obs_id_name, var_id_name=var_id_name,
                       obsm_varm_width_hints=obsm_varm_width_hints, uns_keys=uns_keys)
    adata.write_h5ad(str(h5ad_path))


def _dataframe(frame, id_name, fallback):
    columns = [n for n in frame.keys() if n != "soma_joinid"]
    return indexed(frame.read(column_names=columns).concat().to_pandas(), frame, id_name, fallback)


def _matrix(array, shape, dask=None):
    if dask:
        return x_array(array, **dask)
    if isinstance(array, DenseNDArray):
        return array.read((slice(None), slice(None))).to_numpy()
    return csr(array, (), shape)


def _dense(array, rows, width):
    """An obsm/varm matrix as numpy: a dense array as stored, a sparse one
    ``rows`` by its width (given, else its shape's)."""
    if isinstance(array, DenseNDArray):
        return array.read().to_numpy()
    return csr(array, (), (rows, width or array.shape[1])).toarray()


# How tiledbsoma marks a DataFrame written from a string array in uns, and
# the columns it writes the strings to.
_UNS_HINT = "soma_uns_outgest_hint"
_UNS_VALUES_1D = "values"
_UNS_VALUES_2D = "values_"


def _uns(collection, keys=None, top=True):
    """The ``uns`` mapping a measurement's uns collection was written from,
    as tiledbsoma reads it back: scalars from the collection's metadata,
    mappings from collections, numeric arrays from DenseNDArrays, string
    arrays and data frames from DataFrames. ``keys`` picks top-level keys."""
    wanted = (lambda k: True) if keys is None or not top else (lambda k: k in keys)
    out = {}
    for key in filter(wanted, collection.keys()):
        element = collection[key]
        if isinstance(element, Collection):
            out[key] = _uns(element, top=False)
        elif isinstance(element, DataFrame):
            out[key] = _uns_frame(element)
        elif isinstance(element, SparseNDArray):
            out[key] = element.read().tables().concat().to_pandas()
        elif isinstance(element, DenseNDArray):
            out[key] = element.read().to_numpy()
    out.update((k, v) for k, v in collection.metadata.items() if wanted(k) and not k.startswith("soma_"))
    return out


def _uns_frame(frame):
    """A DataFrame in uns: a string array if its hint says it was one, else
    a pandas DataFrame indexed as it was written."""
    hint = frame.metadata.get(_UNS_HINT)
    if hint not in ("array_1d", "array_2d"):
        return _dataframe(frame, None, "index")
    table = frame.read().concat()
    names = [n for n in table.column_names if n != "soma_joinid"]
    if hint == "array_1d":
        if names != [_UNS_VALUES_1D]:
            raise SOMAError(f"{frame.uri}: a 1-D string array in uns has columns {names}, not {[_UNS_VALUES_1D]}")
        return np.asarray(table.column(_UNS_VALUES_1D).to_pylist())
    want = [f"{_UNS_VALUES_2D}{i}" for i in range(len(names))]
    if not names or sorted(names) != sorted(want):
        raise SOMAError(f"{frame.uri}: a 2-D string array in uns has columns {names}, not {want}")
    return np.asarray([table.column(n).to_pylist() for n in want]).transpose()
