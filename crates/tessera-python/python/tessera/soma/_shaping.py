"""An experiment's shapes, as ``tiledbsoma.io.get_experiment_shapes`` and
``resize_experiment`` give and change them: obs and each var by their
``soma_joinid`` domain, the matrices over them by their shapes."""

from ._arrays import DataFrame, DenseNDArray, SparseNDArray
from ._errors import SOMAError

# The shape each matrix collection of a measurement needs, from the
# number of obs and var and the matrix's current shape.
_NEEDS = {
    "X": lambda nobs, nvar, shape: (nobs, nvar),
    "obsm": lambda nobs, nvar, shape: (nobs, shape[1]),
    "obsp": lambda nobs, nvar, shape: (nobs, nobs),
    "varm": lambda nobs, nvar, shape: (nvar, shape[1]),
    "varp": lambda nobs, nvar, shape: (nvar, nvar),
}


def _describe(item):
    out = {"uri": item.uri, "type": type(item).__name__}
    if isinstance(item, DataFrame):
        out.update(count=item.count, non_empty_domain=item.non_empty_domain(), domain=item.domain,
                   maxdomain=item.maxdomain, upgraded=True)
    else:
        if isinstance(item, SparseNDArray):
            out["non_empty_domain"] = item.non_empty_domain()
        out.update(shape=item.shape, maxshape=item.maxshape, upgraded=True)
    return out


def _matrices(ms):
    """``(collection name, member name, array)`` of every matrix of a measurement."""
    for coll in _NEEDS:
        if coll in ms:
            for name in ms[coll].keys():
                array = ms[coll][name]
                if isinstance(array, (SparseNDArray, DenseNDArray)):
                    yield coll, name, array


def get_experiment_shapes(uri, *, context=None):
    """Each object's shape as a nested dict: ``obs``, and per measurement
    ``var`` and each matrix collection's arrays."""
    from ._collection import Experiment

    experiment = Experiment.open(uri, context=context)
    out = {"obs": _describe(experiment.obs), "ms": {}}
    for name in experiment.ms.keys():
        ms = experiment.ms[name]
        entry = {"var": _describe(ms.var)} if "var" in ms else {}
        for coll, key, array in _matrices(ms):
            entry.setdefault(coll, {})[key] = _describe(array)
        out["ms"][name] = entry
    return out


def resize_experiment(uri, *, nobs, nvars, verbose=False, check_only=False, context=None, output_handle=None):
    """Grows obs to ``nobs`` rows, each measurement's var to ``nvars[name]``
    (its current size where not given), and the matrices over them to
    match; nothing shrinks. With ``check_only``, changes nothing and says
    whether every resize would succeed."""
    from ._collection import Experiment

    experiment = Experiment.open(uri, "w", context=context)
    obs = experiment.obs
    nobs = max(int(nobs), obs.domain[0][1] + 1)
    # Each resize, as a call taking check_only.
    resizes = [lambda check, o=obs: o.tiledbsoma_resize_soma_joinid_shape(nobs, check_only=check)]
    for name in experiment.ms.keys():
        ms = experiment.ms[name]
        current = ms.var.domain[0][1] + 1 if "var" in ms else 0
        nvar = max(int(nvars.get(name, current)), current)
        if "var" in ms:
            resizes.append(lambda check, v=ms.var, n=nvar: v.tiledbsoma_resize_soma_joinid_shape(n, check_only=check))
        for coll, _, array in _matrices(ms):
            want = tuple(max(w, s) for w, s in zip(_NEEDS[coll](nobs, nvar, array.shape), array.shape))
            if want != array.shape:
                resizes.append(lambda check, a=array, w=want: a.resize(w, check_only=check))
    problems = [why for ok, why in (r(True) for r in resizes) if not ok]
    if check_only:
        return not problems
    if problems:
        raise SOMAError(f"{uri}: cannot resize: {'; '.join(problems)}")
    for resize in resizes:
        resize(False)
    return True
