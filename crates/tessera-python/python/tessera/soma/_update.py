"""Edits of an experiment, as tiledbsoma.io makes them: ``update_obs`` and
``update_var`` replace a frame (columns added and dropped by schema
evolution, every row written again), ``update_matrix`` writes a matrix's
values again, ``add_X_layer`` and ``add_matrix_to_collection`` add a
matrix beside the others."""

import numpy as np

from . import _create, _matrices
from ._arrays import DenseNDArray, SparseNDArray
from ._collection import Collection
from ._errors import AlreadyExistsError, SOMAError, SOMATypeError, SOMAValueError
from ._registration import AxisIDMapping


def update_obs(exp, new_data, *, context=None, platform_config=None, default_index_name="obs_id"):
    """Replaces ``exp.obs`` (open for writing) with the pandas frame
    ``new_data``: the same rows, in joinid order; columns it adds are
    added, columns it lacks dropped, and a column may not change type."""
    _update_dataframe(exp.obs, new_data, "update_obs", default_index_name)


def update_var(exp, new_data, measurement_name, *, context=None, platform_config=None,
               default_index_name="var_id"):
    """Replaces the ``var`` of ``exp.ms[measurement_name]`` as
    :func:`update_obs` replaces obs."""
    if measurement_name not in exp.ms:
        raise SOMAValueError(f"cannot find measurement name {measurement_name} within experiment at {exp.uri}")
    _update_dataframe(exp.ms[measurement_name].var, new_data, "update_var", default_index_name)


def _signature(schema):
    """Column name to type name, dictionaries by their keys' type and
    strings and binaries alike in both widths, ``soma_joinid`` left out."""
    import pyarrow as pa

    same = {"large_string": "string", "large_binary": "binary"}
    out = {}
    for f in schema:
        if f.name == "soma_joinid":
            continue
        t = f.type.index_type if pa.types.is_dictionary(f.type) else f.type
        out[f.name] = same.get(str(t), str(t))
    return out


def _update_dataframe(sdf, new_data, caller, default_index_name):
    from . import _frames

    sdf.verify_open_for_writing()
    df = new_data.copy()
    _frames.demote_index(df, default_index_name)
    df["soma_joinid"] = np.arange(len(df), dtype=np.int64)
    df.set_index("soma_joinid", inplace=True)
    table = _frames.arrow_table(df)
    old, new = _signature(sdf.schema), _signature(table.schema)
    joinids = sorted(sdf._array.read(attrs=[], dims=["soma_joinid"]).column("soma_joinid").to_pylist())
    if len(joinids) != len(new_data):
        raise SOMAValueError(f"{caller}: old and new data must have the same row count; "
                             f"got {len(joinids)} != {len(new_data)}")
    diffs = [(a, b) for a, b in zip(joinids, range(len(joinids))) if a != b]
    if diffs:
        shown = ", ".join(f"{a} != {b}" for a, b in diffs[:10]) + (", …" if len(diffs) > 10 else "")
        raise SOMAValueError(f"{caller}: old data soma_joinid must be [0,{len(joinids)}), "
                             f"found {len(diffs)} diffs: {shown}")
    changed = [f"{k} type {old[k]} != {new[k]}" for k in sorted(set(old) & set(new)) if old[k] != new[k]]
    if changed:
        raise SOMAValueError(f"unsupported type updates: {', '.join(changed)}")
    drop = [k for k in old if k not in new]
    add = [k for k in new if k not in old]
    if drop or add:
        # A dropped column's enumeration stays, as tiledbsoma leaves it.
        evolution = {"drop_attributes": drop, "add_attributes": [], "add_enumerations": []}
        for name in add:
            attr, enum = _create._attribute(table.schema.field(name), table.schema.metadata)
            evolution["add_attributes"].append(attr)
            if enum is not None:
                evolution["add_enumerations"].append(enum)
        sdf._evolve(evolution)
    # The rows in the frame's column order.
    sdf.write(table.select(list(sdf.keys())))


def update_matrix(soma_ndarray, new_data, *, context=None, platform_config=None):
    """Writes ``new_data`` over the array (open for writing) at the same
    positions: a scipy matrix (or backed one) into a SparseNDArray, a numpy
    array into a DenseNDArray. Cells the new data does not hold stay."""
    if isinstance(soma_ndarray, DenseNDArray):
        _matrices.write_dense(soma_ndarray, new_data)
    elif isinstance(soma_ndarray, SparseNDArray):
        _matrices.write_sparse(soma_ndarray, new_data)
    else:
        raise SOMATypeError(f"unknown array type {type(soma_ndarray)}")


def add_X_layer(exp, measurement_name, X_layer_name, X_layer_data, ingest_mode="write", use_relative_uri=None,
                context=None, schema_validation=True):
    """Adds ``X_layer_data`` as the X layer ``X_layer_name`` of
    ``exp.ms[measurement_name]`` (a SparseNDArray of obs by var)."""
    add_matrix_to_collection(exp, measurement_name, "X", X_layer_name, X_layer_data, ingest_mode=ingest_mode,
                             use_relative_uri=use_relative_uri, context=context,
                             schema_validation=schema_validation)


def _check_shape(exp, ms, collection_name, name, matrix):
    """tiledbsoma's checks of a matrix's shape against obs and var."""
    nobs = exp.obs.domain[0][1] + 1
    nvar = ms.var.domain[0][1] + 1
    shape = tuple(matrix.shape)
    if len(shape) != 2:
        raise SOMAError(f"Matrix '{name}' has {len(shape)} dimensions, but the existing matrix has 2. "
                        "Shapes must match.")
    wants = {
        "X": ((nobs, nvar), "Both dimensions must match exactly."),
        "obsp": ((nobs, nobs), "It must match the observation size."),
        "varp": ((nvar, nvar), "It must match the variable size."),
    }
    if collection_name in wants:
        want, why = wants[collection_name]
        if shape != want:
            raise SOMAError(f"Matrix '{name}' shape {shape} is incompatible with target shape {want}. {why}")
    rows = {"obsm": (nobs, "observation size (O)"), "varm": (nvar, "variable size (V)")}
    if collection_name in rows and shape[0] != rows[collection_name][0]:
        n, what = rows[collection_name]
        raise SOMAError(f"Matrix '{name}' must match the {what}. Found {shape[0]}, expected {n}.")


def add_matrix_to_collection(exp, measurement_name, collection_name, matrix_name, matrix_data, ingest_mode="write",
                             use_relative_uri=None, context=None, schema_validation=True):
    """Adds ``matrix_data`` as ``matrix_name`` in the collection
    ``collection_name`` (``X``, ``obsm``, ``varm``, ``obsp``, ``varp``;
    created if missing) of ``exp.ms[measurement_name]``, a SparseNDArray."""
    if ingest_mode not in ("write", "schema_only", "resume"):
        raise SOMAValueError(f"expected ingest_mode to be one of write, schema_only, resume; got {ingest_mode!r}")
    ms = exp.ms[measurement_name]
    if schema_validation:
        _check_shape(exp, ms, collection_name, matrix_name, matrix_data)
    if collection_name in ms:
        coll = ms[collection_name]
    else:
        coll = ms.add_new_collection(collection_name, Collection)
    uri = f"{coll.uri}/{matrix_name}"
    shape = tuple(int(n) for n in matrix_data.shape)
    try:
        array = SparseNDArray.create(uri, type=_matrices.soma_type(matrix_data), shape=shape, context=context)
    except AlreadyExistsError:
        if ingest_mode == "write":
            raise SOMAError(f"{uri} already exists") from None
        array = SparseNDArray.open(uri, "w", context=context)
    if matrix_name not in coll:
        coll.set(matrix_name, array, use_relative_uri=use_relative_uri)
    if ingest_mode != "schema_only":
        _matrices.write_sparse(array, matrix_data, AxisIDMapping.identity(shape[0]).data,
                               AxisIDMapping.identity(shape[1]).data)
    return array
