"""AnnData objects and ``.h5ad`` files into SOMA experiments, as
``tiledbsoma.io.from_anndata`` and ``from_h5ad`` write them: the same
objects, schemas, names and metadata, so tiledbsoma reads and appends to
what tessera wrote. X and its layers stream a chunk at a time (see
``_matrices``)."""

import json
import os
import shutil
import uuid
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

import tessera
from tessera import _native
from tessera._convert import storage_pairs

from . import _context, _matrices, _writing
from ._arrays import DataFrame, DenseNDArray, SparseNDArray
from ._collection import Collection, Experiment, Measurement
from ._context import is_object_store
from ._writing import ENCODING_VERSION
from ._errors import AlreadyExistsError, SOMAError, SOMATypeError, SOMAValueError
from ._h5ad import H5ADSource
from ._registration import AxisIDMapping, ExperimentIDMapping

INGEST_MODES = ("write", "schema_only", "resume")
# Metadata tiledbsoma keeps for the way back out.
ORIGINAL_INDEX_NAME = "soma_dataframe_original_index_name"
UNS_HINT = "soma_uns_outgest_hint"
TILEDBSOMA_TYPE = "soma_tiledbsoma_type"


class _Plan:
    """How one ingestion runs: its mode, storage, and where joinids come from."""

    def __init__(self, ingest_mode, context, use_relative_uri, additional_metadata, registration_mapping):
        if ingest_mode not in INGEST_MODES:
            raise SOMAValueError(f"expected ingest_mode to be one of {INGEST_MODES}; got {ingest_mode!r}")
        self.schema_only = ingest_mode == "schema_only"
        self.appending = registration_mapping is not None
        self.resume = ingest_mode == "resume"
        self.must_be_new = ingest_mode == "write" and not self.appending
        self.context = context
        self.relative = use_relative_uri
        self.additional_metadata = dict(additional_metadata or {})

    def collection(self, cls, uri):
        """A new collection of ``cls`` at ``uri``, or (appending or
        resuming) the one there."""
        try:
            coll = cls.create(uri, context=self.context)
        except AlreadyExistsError:
            if self.must_be_new:
                raise SOMAError(f"{uri} already exists") from None
            coll = cls.open(uri, "w", context=self.context)
        self.annotate(coll)
        return coll

    def experiment(self, uri):
        """The experiment at ``uri``, and a call that completes it. A new
        experiment on an object store is a bare group until that call puts
        its SOMA metadata: until then no reader opens it as an experiment."""
        if not (self.must_be_new and is_object_store(uri)):
            return self.collection(Experiment, uri), lambda: None
        options = _context.options_for(uri, self.context)
        try:
            _native.create_group(uri, storage_pairs(options))
        except tessera.TesseraError as e:
            if _writing._exists(uri, options):
                raise SOMAError(f"{uri} already exists") from None
            raise SOMAError(f"{uri}: cannot create the experiment: {e}") from None
        experiment = Experiment(tessera.open_group(uri, storage_options=options), "w", None, options)
        metadata = {"soma_object_type": Experiment.soma_type, "soma_encoding_version": ENCODING_VERSION,
                    **Experiment._create_metadata, **self.additional_metadata}
        return experiment, lambda: experiment.metadata.update(metadata)

    def annotate(self, obj):
        if self.additional_metadata:
            obj.metadata.update(self.additional_metadata)

    def attach(self, parent, key, child):
        """Lists ``child`` in ``parent`` under ``key`` unless it is there."""
        if key not in parent:
            parent.set(key, child, use_relative_uri=self.relative)


def from_h5ad(experiment_uri, input_path, measurement_name, *, context=None, platform_config=None,
              obs_id_name="obs_id", var_id_name="var_id", X_layer_name="data", raw_X_layer_name="data",
              ingest_mode="write", use_relative_uri=None, X_kind=SparseNDArray, registration_mapping=None,
              uns_keys=None, additional_metadata=None):
    """Writes the ``.h5ad`` file at ``input_path`` into a new SOMA experiment
    at ``experiment_uri`` (arguments as :func:`from_anndata`). The file is
    opened backed: X and its layers are read a chunk at a time, so memory
    holds obs, var, uns and one chunk, not the matrices (X, layers, obsm,
    varm, obsp, varp and raw's X all stay in the file)."""
    with H5ADSource(input_path) as source:
        return _ingest(experiment_uri, source, measurement_name, context=context, obs_id_name=obs_id_name,
                       var_id_name=var_id_name, X_layer_name=X_layer_name, raw_X_layer_name=raw_X_layer_name,
                       ingest_mode=ingest_mode, use_relative_uri=use_relative_uri, X_kind=X_kind,
                       registration_mapping=registration_mapping, uns_keys=uns_keys,
                       additional_metadata=additional_metadata)


def from_anndata(experiment_uri, anndata, measurement_name, *, context=None, platform_config=None,
                 obs_id_name="obs_id", var_id_name="var_id", X_layer_name="data", raw_X_layer_name="data",
                 ingest_mode="write", use_relative_uri=None, X_kind=SparseNDArray, registration_mapping=None,
                 uns_keys=None, additional_metadata=None):
    """Writes ``anndata`` into a SOMA experiment at ``experiment_uri``, as
    tiledbsoma.io does: ``obs``; in ``ms[measurement_name]`` ``var``, X
    (layer ``X_layer_name``) and its layers (``X_kind``: SparseNDArray or
    DenseNDArray), obsm, varm, obsp, varp and uns; ``raw`` as the
    measurement ``raw``. ``ingest_mode="schema_only"`` creates every object
    and writes no cells. With a ``registration_mapping`` (from
    :func:`register_anndatas`), the cells are appended at the joinids it
    assigns. Returns the experiment's URI."""
    import anndata as ad

    if not isinstance(anndata, ad.AnnData):
        raise SOMATypeError("Second argument is not an AnnData object -- did you want from_h5ad?")
    return _ingest(experiment_uri, anndata, measurement_name, context=context, obs_id_name=obs_id_name,
                   var_id_name=var_id_name, X_layer_name=X_layer_name, raw_X_layer_name=raw_X_layer_name,
                   ingest_mode=ingest_mode, use_relative_uri=use_relative_uri, X_kind=X_kind,
                   registration_mapping=registration_mapping, uns_keys=uns_keys,
                   additional_metadata=additional_metadata)


def _ingest(experiment_uri, anndata, measurement_name, *, context, obs_id_name, var_id_name, X_layer_name,
            raw_X_layer_name, ingest_mode, use_relative_uri, X_kind, registration_mapping, uns_keys,
            additional_metadata):
    """from_anndata's work, on an AnnData or an ``.h5ad`` file's
    :class:`H5ADSource` (the same names)."""
    if X_kind not in (SparseNDArray, DenseNDArray):
        raise SOMATypeError(f"X_kind must be SparseNDArray or DenseNDArray, not {X_kind!r}")
    plan = _Plan(ingest_mode, context, use_relative_uri, additional_metadata, registration_mapping)
    if plan.appending and X_kind is DenseNDArray:
        raise SOMAValueError("dense X is not supported for append mode")
    for key in ("obsm", "obsp", "varm", "varp"):
        for name, value in getattr(anndata, key).items():
            if not (hasattr(value, "shape") and len(value.shape) == 2):
                raise SOMATypeError(f"{key} value at {name} is not a matrix: {type(value)}")
    if anndata.obs.index.empty or anndata.var.index.empty:
        raise SOMAValueError("Empty AnnData.obs or AnnData.var unsupported.")
    anndata.obs_names_make_unique()
    anndata.var_names_make_unique()
    experiment_uri = str(experiment_uri).rstrip("/")

    if registration_mapping is None:
        maps = ExperimentIDMapping.from_anndata(anndata, measurement_name=measurement_name)
    else:
        if not registration_mapping.prepared and Experiment.exists(experiment_uri, context=context):
            raise SOMAError("Experiment must be prepared prior to ingestion. Please call "
                            "``registration_map.prepare_experiment`` method.")
        maps = registration_mapping.id_mappings_for_anndata(anndata, measurement_name=measurement_name)

    names = (obs_id_name, var_id_name, X_layer_name, raw_X_layer_name, X_kind, uns_keys)
    if not plan.must_be_new or is_object_store(experiment_uri):
        _write_experiment(plan, experiment_uri, anndata, measurement_name, maps, names)
        return experiment_uri
    return _staged(experiment_uri, lambda at: _write_experiment(plan, at, anndata, measurement_name, maps, names))


def _staged(uri, write):
    """Writes a new local experiment in a hidden folder beside ``uri``
    (``write(folder)``) and renames it to ``uri`` once whole, so readers
    never see a part of it; a failed write leaves nothing."""
    path = os.path.abspath(uri.removeprefix("file://"))
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise SOMAError(f"{uri} already exists")
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{name}.tessera-{uuid.uuid4().hex}")
    try:
        write(staging)
        if os.path.isdir(path):
            os.rmdir(path)  # empty, checked above
        os.rename(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return uri


def _write_experiment(plan, experiment_uri, anndata, measurement_name, maps, names):
    """Writes (or appends) ``anndata`` into the experiment at ``experiment_uri``."""
    obs_id_name, var_id_name, X_layer_name, raw_X_layer_name, X_kind, uns_keys = names
    obs_map, var_map = maps.obs_axis, maps.var_axes[measurement_name]
    experiment, complete = plan.experiment(experiment_uri)
    obs = _write_frame(plan, f"{experiment_uri}/obs", anndata.obs, obs_id_name, obs_map)
    plan.attach(experiment, "obs", obs)
    ms = plan.collection(Collection, f"{experiment_uri}/ms")
    plan.attach(experiment, "ms", ms)
    measurement = plan.collection(Measurement, f"{experiment_uri}/ms/{measurement_name}")
    plan.attach(ms, measurement_name, measurement)
    if anndata.uns:
        _write_uns(plan, measurement, "uns", anndata.uns, uns_keys, top=True)
    var = _write_frame(plan, f"{measurement.uri}/var", anndata.var, var_id_name, var_map)
    plan.attach(measurement, "var", var)

    X = plan.collection(Collection, f"{measurement.uri}/X")
    plan.attach(measurement, "X", X)
    matrices = ([(X_layer_name, anndata.X)] if _has_X(anndata) else []) + list(anndata.layers.items())
    for name, matrix in matrices:
        _write_matrix(plan, X, name, X_kind, matrix, obs_map, var_map)
    for key, rows, cols in (("obsm", obs_map, None), ("varm", var_map, None),
                            ("obsp", obs_map, obs_map), ("varp", var_map, var_map)):
        values = getattr(anndata, key)
        if len(values.keys()) == 0:
            continue
        coll = plan.collection(Collection, f"{measurement.uri}/{key}")
        plan.attach(measurement, key, coll)
        for name, matrix in values.items():
            _write_matrix(plan, coll, name, SparseNDArray, _storable(matrix), rows,
                          cols or AxisIDMapping.identity(matrix.shape[1]))

    if anndata.raw is not None:
        raw = plan.collection(Measurement, f"{experiment_uri}/ms/raw")
        plan.attach(ms, "raw", raw)
        raw_var = _write_frame(plan, f"{raw.uri}/var", anndata.raw.var, var_id_name, maps.var_axes["raw"])
        plan.attach(raw, "var", raw_var)
        raw_X = plan.collection(Collection, f"{raw.uri}/X")
        plan.attach(raw, "X", raw_X)
        _write_matrix(plan, raw_X, raw_X_layer_name, SparseNDArray, anndata.raw.X, obs_map,
                      maps.var_axes["raw"])
    complete()
    return experiment.uri


def _has_X(anndata):
    try:
        return anndata.X is not None
    except (NameError, KeyError):
        return False


def _storable(matrix):
    return matrix.astype(np.float32) if getattr(matrix, "dtype", None) == np.float16 else matrix


def _write_frame(plan, uri, frame, id_column_name, axis_map, index_map=True):
    """Writes a pandas frame (obs, var, or one in uns) as a DataFrame at
    ``uri``, its rows at the joinids ``axis_map`` gives."""
    # pandas is loaded by ingestion only, not by every import of io.
    from . import _frames

    df = _frames.storable(frame) if index_map else frame.copy()
    original_index = _frames.demote_index(df, id_column_name) if index_map else None
    df["soma_joinid"] = axis_map.data
    df.set_index("soma_joinid", inplace=True)
    table = _frames.arrow_table(df)
    try:
        soma_df = DataFrame.create(uri, schema=table.schema, domain=[[0, axis_map.get_shape() - 1]],
                                   context=plan.context)
        soma_df.metadata[ORIGINAL_INDEX_NAME] = json.dumps(original_index)
    except AlreadyExistsError:
        if plan.must_be_new:
            raise SOMAError(f"{uri} already exists") from None
        soma_df = DataFrame.open(uri, "w", context=plan.context)
        if plan.appending:
            table = _new_rows(soma_df, table)
    if not plan.schema_only and table.num_rows:
        soma_df.write(table)
    plan.annotate(soma_df)
    return soma_df


def _new_rows(soma_df, table):
    """The rows of ``table`` whose joinids the DataFrame does not hold yet,
    with its columns: an append writes new cells only."""
    have = soma_df._array.read(attrs=[], dims=["soma_joinid"]).column("soma_joinid").to_numpy()
    keep = ~np.isin(table.column("soma_joinid").to_numpy(), have)
    return table.filter(pa.array(keep))


def _write_matrix(plan, coll, key, kind, matrix, rows, cols):
    """Writes ``matrix`` as the member ``key`` of ``coll``: a new array of
    ``kind`` shaped by the joinid maps, or the existing one when appending."""
    if len(matrix.shape) != 2:
        raise SOMAValueError(f"{coll.uri}/{key}: expected a 2-D matrix; got shape {matrix.shape}")
    uri = f"{coll.uri}/{key}"
    shape = (rows.get_shape(), cols.get_shape())
    try:
        array = kind.create(uri, type=_matrices.soma_type(matrix), shape=shape, context=plan.context)
    except AlreadyExistsError:
        if plan.must_be_new:
            raise SOMAError(f"{uri} already exists") from None
        array = kind.open(uri, "w", context=plan.context)
    plan.attach(coll, key, array)
    if not plan.schema_only:
        if kind is DenseNDArray:
            _matrices.write_dense(array, matrix)
        else:
            _matrices.write_sparse(array, matrix, rows.data, cols.data)
    plan.annotate(array)
    return array


def _write_uns(plan, parent, key, mapping, uns_keys=None, top=False):
    """Writes the mapping ``mapping`` as the collection ``key`` of ``parent``:
    scalars as its metadata, mappings as collections, data frames as
    DataFrames, string arrays as DataFrames with an outgest hint, numeric
    arrays as DenseNDArrays; other values are skipped, as tiledbsoma
    skips them."""
    coll = plan.collection(Collection, f"{parent.uri}/{key}")
    plan.attach(parent, key, coll)
    coll.metadata[TILEDBSOMA_TYPE] = "uns"
    for name, value in mapping.items():
        if top and uns_keys is not None and name not in uns_keys:
            continue
        _write_uns_node(plan, coll, str(name), value)


def _write_uns_node(plan, coll, key, value):
    import pandas as pd

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (int, float, str)):
        coll.metadata[key] = value
        return
    if isinstance(value, pd.DataFrame):
        if plan.appending:
            # As tiledbsoma: an append adds no data frames to uns.
            raise SOMAValueError(f"{coll.uri}/{key}: an append cannot add a data frame to uns")
        frame = _write_frame(plan, f"{coll.uri}/{key}", value, None, AxisIDMapping.identity(len(value)))
        plan.attach(coll, key, frame)
        return
    if isinstance(value, Mapping):
        _write_uns(plan, coll, key, value)
        return
    if isinstance(value, list) or "numpy" in str(type(value)):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray) or value.dtype.names is not None:
        return
    if value.dtype.char in ("U", "O"):
        _write_uns_strings(plan, coll, key, value)
    elif value.size and all(n > 0 for n in value.shape):
        try:
            t = pa.from_numpy_dtype(value.dtype)
        except (pa.ArrowNotImplementedError, TypeError):
            return
        uri = f"{coll.uri}/{key}"
        try:
            array = DenseNDArray.create(uri, type=t, shape=value.shape, context=plan.context)
        except AlreadyExistsError:
            array = DenseNDArray.open(uri, "w", context=plan.context)
        plan.attach(coll, key, array)
        if not plan.schema_only:
            _matrices.write_dense(array, value)
        plan.annotate(array)


def _write_uns_strings(plan, coll, key, value):
    """A 1-D or 2-D string array in uns as a DataFrame of string columns
    (``values``, or ``values_0`` ...), as tiledbsoma stores them."""
    import pandas as pd

    if value.ndim == 1:
        data = {"values": [str(e) if e else "" for e in value]}
        hint = "array_1d"
    elif value.ndim == 2:
        data = {f"values_{j}": [str(e) if e else "" for e in value[:, j]] for j in range(value.shape[1])}
        hint = "array_2d"
    else:
        return
    df = pd.DataFrame(data)
    df.index = pd.RangeIndex(len(df), name="soma_joinid")
    frame = _write_frame(plan, f"{coll.uri}/{key}", df, None, AxisIDMapping.identity(len(df)), index_map=False)
    frame.metadata[UNS_HINT] = hint
    plan.attach(coll, key, frame)
