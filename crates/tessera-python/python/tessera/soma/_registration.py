"""Registration for appends, as ``tiledbsoma.io.register_anndatas`` and
``register_h5ads`` do it: every obs and var label of the inputs gets a
``soma_joinid`` (labels the experiment holds keep theirs, new ones follow
its largest), categoricals gather their categories, and
``prepare_experiment`` grows the experiment's domains and enumerations
before any input is written, so inputs may then be written side by side.
"""

import numpy as np

import tessera
from tessera import _native

from ._errors import SOMAError, SOMAValueError


class AxisIDMapping:
    """Positions along one axis of one input to joinids: ``data[i]`` is the
    joinid of position ``i``."""

    def __init__(self, data):
        self.data = np.asarray(data, dtype=np.int64)

    @classmethod
    def identity(cls, n):
        return cls(np.arange(n, dtype=np.int64))

    def get_shape(self):
        """The joinids an array needs to hold this axis: the largest plus one."""
        return int(self.data.max()) + 1 if len(self.data) else 0

    def is_identity(self):
        return bool(np.array_equal(self.data, np.arange(len(self.data))))


class ExperimentIDMapping:
    """One input's joinids: ``obs_axis``, and ``var_axes`` by measurement."""

    def __init__(self, obs_axis, var_axes):
        self.obs_axis = obs_axis
        self.var_axes = dict(var_axes)

    @classmethod
    def from_anndata(cls, adata, *, measurement_name="RNA"):
        """Positions as joinids: a new experiment from one input."""
        var_axes = {measurement_name: AxisIDMapping.identity(adata.n_vars)}
        if adata.raw is not None:
            var_axes["raw"] = AxisIDMapping.identity(adata.raw.n_vars)
        return cls(AxisIDMapping.identity(adata.n_obs), var_axes)


def labels(df, field_name):
    """The registration labels of an obs or var frame: the column
    ``field_name``, or the index where it is unnamed or so named."""
    import pandas as pd

    if field_name in df:
        return pd.Index(df[field_name])
    if df.index.name in (field_name, "index", None):
        return df.index
    raise SOMAValueError(f"Could not find field name {field_name} in dataframe.")


def label_array(values, what="labels"):
    """Labels (a pandas index or column, a numpy or pyarrow array) as the
    pyarrow string array the native registry takes; other types by their
    text, as pandas' ``astype(str)`` gives it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        array = values
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
                or pa.types.is_string_view(array.type)):
            array = pc.cast(array.dictionary_decode() if pa.types.is_dictionary(array.type) else array,
                            pa.large_string())
    else:
        try:
            array = pa.array(values, type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            array = pa.array(np.asarray(values).astype(str), type=pa.large_string())
    if array.null_count:
        raise SOMAValueError(f"{what}: {array.null_count} label(s) are missing (null or NaN)")
    return array


class AxisAmbientLabelMapping:
    """Every registered label of one axis and its joinid, held by the
    native ``LabelRegistry`` (``joinid_map`` gives them as tiledbsoma
    does: a frame indexed by label, column ``soma_joinid``), and each
    categorical column's categories (``enum_values``)."""

    def __init__(self, field_name, joinid_map=None, enum_values=None, allow_duplicate_ids=False, *,
                 registry=None):
        self.field_name = field_name
        if registry is None:
            registry = _native.LabelRegistry()
            if joinid_map is not None and len(joinid_map):
                registry.insert(label_array(joinid_map.index, field_name),
                                pa_int64(joinid_map["soma_joinid"].to_numpy()))
        self._registry = registry
        self.enum_values = dict(enum_values or {})
        self.allow_duplicate_ids = allow_duplicate_ids

    @property
    def shape(self):
        """The joinids an array needs to hold this axis: the largest plus one."""
        return self._registry.shape

    @property
    def joinid_map(self):
        """Labels to joinids as a pandas frame (built when asked for)."""
        import pandas as pd

        return pd.DataFrame(index=pd.Index(self._registry.labels().to_pandas(), name=self.field_name),
                            data={"soma_joinid": np.frombuffer(self._registry.joinids(), dtype=np.int64)})

    def __len__(self):
        return len(self._registry)

    def __eq__(self, other):
        if not isinstance(other, AxisAmbientLabelMapping):
            return NotImplemented
        return (self.field_name == other.field_name and self.enum_values == other.enum_values
                and self.joinid_map.equals(other.joinid_map))

    __hash__ = None

    def __getstate__(self):
        state = dict(self.__dict__)
        registry = state.pop("_registry")
        state["_labels"] = registry.labels()
        state["_joinids"] = bytes(registry.joinids())
        return state

    def __setstate__(self, state):
        labels, joinids = state.pop("_labels"), state.pop("_joinids")
        self.__dict__.update(state)
        self._registry = _native.LabelRegistry()
        self._registry.insert(labels, pa_int64(np.frombuffer(joinids, dtype=np.int64)))

    def id_mapping_from_values(self, input_ids):
        """The joinids of the labels ``input_ids``, which must be registered."""
        found = np.frombuffer(self._registry.lookup(label_array(input_ids, self.field_name)), dtype=np.int64)
        missing = found == -1
        if missing.any():
            examples = list(np.asarray(input_ids)[missing][:5])
            raise SOMAValueError(f"{self.field_name}: {int(missing.sum())} value(s) were not found in the "
                                 f"registration data, such as {examples}")
        return AxisIDMapping(found)

    def id_mapping_from_dataframe(self, df):
        values = labels(df, self.field_name)
        if not values.is_unique:
            raise SOMAValueError(f"Non-unique registration values have been provided in field {self.field_name}.")
        return self.id_mapping_from_values(values)

    def subset(self, values):
        """A copy holding only the labels ``values`` (each registered)."""
        registry, (examples, count) = self._registry.subset(label_array(values, self.field_name))
        if registry is None:
            raise SOMAValueError(f"{self.field_name}: {count} value(s) were not found in the registration "
                                 f"data, such as {examples}")
        return AxisAmbientLabelMapping(self.field_name, None, self.enum_values, self.allow_duplicate_ids,
                                       registry=registry)


def pa_int64(values):
    import pyarrow as pa

    return pa.array(np.asarray(values, dtype=np.int64), type=pa.int64())


class ExperimentAmbientLabelMapping:
    """What registering inputs gives: the obs axis, each measurement's var
    axis, and whether ``prepare_experiment`` has run."""

    def __init__(self, obs_axis, var_axes, prepared=False):
        self.obs_axis = obs_axis
        self.var_axes = dict(var_axes)
        self.prepared = prepared

    def id_mappings_for_anndata(self, adata, *, measurement_name="RNA"):
        """The joinids of one registered input's obs and var (and raw.var)."""
        if measurement_name not in self.var_axes:
            raise SOMAValueError(f"measurement {measurement_name!r} was not registered "
                                 f"(registered: {', '.join(self.var_axes)})")

        def joinids(axis, df):
            return axis.id_mapping_from_values(labels(df, axis.field_name))

        var_axes = {measurement_name: joinids(self.var_axes[measurement_name], adata.var)}
        if adata.raw is not None:
            var_axes["raw"] = joinids(self.var_axes["raw"], adata.raw.var)
        return ExperimentIDMapping(joinids(self.obs_axis, adata.obs), var_axes)

    def get_obs_shape(self):
        return self.obs_axis.shape

    def get_var_shapes(self):
        return {name: axis.shape for name, axis in self.var_axes.items()}

    def subset_for_anndata(self, adata):
        """A copy holding only the obs labels of ``adata`` (less to send to
        a worker that writes it)."""
        subset = self.obs_axis.subset(labels(adata.obs, self.obs_axis.field_name))
        return ExperimentAmbientLabelMapping(subset, self.var_axes, self.prepared)

    def subset_for_h5ad(self, h5ad_path):
        from ._h5ad import H5ADSource

        with H5ADSource(h5ad_path) as source:
            return self.subset_for_anndata(source)

    def prepare_experiment(self, experiment_uri, context=None):
        """Grows the experiment at ``experiment_uri`` to hold every
        registered input (obs, each var, and the matrices over them) and
        extends its enumerations with the inputs' new categories."""
        from ._collection import Experiment
        from ._shaping import resize_experiment

        hint = "Did you create the Experiment using `from_anndata` or `from_h5ad`?"
        experiment = Experiment.open(experiment_uri, "w", context=context)
        if "obs" not in experiment:
            raise SOMAValueError(f"SOMA Experiment is missing required 'obs' DataFrame. {hint}")
        for name, axis in self.var_axes.items():
            if len(axis) and (name not in experiment.ms or "var" not in experiment.ms[name]):
                raise SOMAValueError(f"SOMA Experiment is missing required Measurement '{name}' or its var. {hint}")
        resize_experiment(experiment_uri, nobs=self.get_obs_shape(),
                          nvars={k: v for k, v in self.get_var_shapes().items() if v > 0}, context=context)
        _extend(experiment.obs, self.obs_axis.enum_values)
        for name, axis in self.var_axes.items():
            if axis.enum_values:
                _extend(experiment.ms[name].var, axis.enum_values)
        self.prepared = True


def _extend(frame, categories):
    """Appends to each enumerated column of ``frame`` the categories it lacks."""
    import pyarrow as pa

    current = frame.get_enumeration_values([c for c in categories if c in frame.keys()
                                            and pa.types.is_dictionary(frame.schema.field(c).type)])
    extend = {}
    for column, dtype in categories.items():
        if column not in current:
            continue
        have = set(current[column].to_pylist())
        new = [v for v in dtype.categories if v not in have]
        if new:
            extend[column] = pa.array(new)
    if extend:
        frame.extend_enumeration_values(extend)


def _validate(adata, append_obsm_varm):
    frames = [(adata.obs, "obs"), (adata.var, "var")]
    if adata.raw is not None:
        frames.append((adata.raw.var, "raw.var"))
    for df, name in frames:
        if df is None or df.index.empty:
            raise SOMAValueError(f"Unable to ingest AnnData with empty {name} dataframe.")
        if not df.index.is_unique:
            raise SOMAValueError(f"Non-unique registration values have been provided in {name} dataframe.")
    if not append_obsm_varm and (len(adata.obsm) or len(adata.varm)):
        raise SOMAValueError("The append-mode ingest of obsm and varm is only supported via explicit opt-in. "
                             "Please drop them from the inputs, or retry with append_obsm_varm=True.")
    if len(adata.obsp) or len(adata.varp):
        raise SOMAValueError("The append-mode ingest of obsp and varp is not supported. Please retry without them.")


class _Axis:
    """One axis' labels (as string arrays) and categoricals gathered from
    the inputs."""

    def __init__(self):
        self.labels = []
        self.dtype = None
        self.categories = {}

    def add(self, df, field_name):
        import pandas as pd

        found = labels(df, field_name)
        if len(found):
            if self.dtype is not None and found.dtype != self.dtype:
                raise SOMAError("All AnnData must have a common dtype for their index.")
            self.dtype = found.dtype
            self.labels.append(label_array(found, field_name))
        for column, values in df.items():
            if isinstance(values.dtype, pd.CategoricalDtype):
                _merge(self.categories, str(column), values.dtype)

    def register(self, registry):
        """Registers the labels in ``registry``: up to four of those it
        held already (or that came twice) and how many."""
        examples, count = [], 0
        for array in self.labels:
            e, n = registry.register(array)
            examples += e[:4 - len(examples)]
            count += n
        return examples, count


def _merge(into, column, dtype):
    """Merges a categorical dtype into ``into[column]``: unordered ones
    gather their categories in order; ordered ones must be the same."""
    import pandas as pd

    have = into.get(column)
    if have is None:
        into[column] = dtype
        return
    if have.ordered != dtype.ordered:
        raise SOMAError(f"Unable to register AnnData -- for column `{column}`, all AnnData dtype must have the "
                        "same categorical ordering.")
    if have.ordered:
        if have != dtype:
            raise SOMAError(f"Unable to register AnnData -- for column `{column}`, all AnnData must have the "
                            "same dtype.")
        return
    into[column] = pd.CategoricalDtype(have.categories.append(dtype.categories).drop_duplicates(), ordered=False)


def _existing(experiment_uri, obs_field_name, var_field_name, context, timestamp=None):
    """The label registries and categories of an existing experiment's obs
    and each measurement's var (or none), as of ``timestamp`` (ms) if given."""
    from ._collection import Experiment
    from ._errors import DoesNotExistError

    try:
        experiment = Experiment.open(experiment_uri, context=context, tiledb_timestamp=timestamp)
    except DoesNotExistError:
        return None, {}, {}, {}

    def registry(frame, field):
        held = _native.LabelRegistry()
        for table in frame.read(column_names=["soma_joinid", field]):
            try:
                held.insert(label_array(table.column(field), f"{frame.uri} {field}"),
                            table.column("soma_joinid").combine_chunks())
            except tessera.TesseraError as e:
                raise SOMAError(f"{frame.uri}: {e}") from None
        return held

    def categories(frame):
        import pandas as pd
        import pyarrow as pa

        names = [f.name for f in frame.schema if pa.types.is_dictionary(f.type)]
        values = frame.get_enumeration_values(names)
        return {n: pd.CategoricalDtype(values[n].to_pylist(), ordered=frame.schema.field(n).type.ordered)
                for n in names}

    obs = registry(experiment.obs, obs_field_name)
    var_registries, var_categories = {}, {}
    for name in experiment.ms.keys():
        ms = experiment.ms[name]
        if "var" in ms and var_field_name in ms.var.keys():
            var_registries[name] = registry(ms.var, var_field_name)
            var_categories[name] = categories(ms.var)
    return obs, var_registries, categories(experiment.obs), var_categories


def _duplicate_obs(examples, count):
    raise SOMAError(f"Duplicate obs IDs found during registration. {count} obs IDs are not unique across "
                    f"the provided inputs. Example duplicate obs ID(s): {list(examples[:4])}. Please ensure obs IDs "
                    "are unique across all inputs for append operations, or pass allow_duplicate_obs_ids=True to "
                    "add a new Measurement to existing observations.")


def _register(experiment_uri, inputs, measurement_name, obs_field_name, var_field_name, context,
              allow_duplicate_obs_ids, timestamp=None):
    """Registration over ``inputs``: ``(obs, var, raw_var or None)`` frames.
    Labels the experiment holds (as of ``timestamp``, ms, if given) keep
    their joinids; new ones follow the largest, in the inputs' order
    (``tessera_soma::LabelRegistry``)."""
    obs, var, raw = _Axis(), _Axis(), _Axis()
    for obs_df, var_df, raw_df in inputs:
        obs.add(obs_df, obs_field_name)
        var.add(var_df, var_field_name)
        if raw_df is not None:
            raw.add(raw_df, var_field_name)
    held_obs, held_vars, old_obs_cats, old_var_cats = (None, {}, {}, {}) if experiment_uri is None else \
        _existing(str(experiment_uri), obs_field_name, var_field_name, context, timestamp)
    obs_registry = held_obs or _native.LabelRegistry()
    examples, count = obs.register(obs_registry)
    if count and not allow_duplicate_obs_ids:
        _duplicate_obs(examples, count)
    obs_cats = dict(old_obs_cats)
    for column, dtype in obs.categories.items():
        _merge(obs_cats, column, dtype)
    var_axes = {}
    axes = [(measurement_name, var)] + ([("raw", raw)] if raw.labels else [])
    for name, axis in axes:
        registry = held_vars.pop(name, None) or _native.LabelRegistry()
        axis.register(registry)  # a gene held already keeps its joinid
        cats = dict(old_var_cats.get(name, {}))
        for column, dtype in axis.categories.items():
            _merge(cats, column, dtype)
        var_axes[name] = AxisAmbientLabelMapping(var_field_name, None, cats, True, registry=registry)
    for name, registry in held_vars.items():
        var_axes[name] = AxisAmbientLabelMapping(var_field_name, None, old_var_cats.get(name, {}), True,
                                                 registry=registry)
    obs_axis = AxisAmbientLabelMapping(obs_field_name, None, obs_cats, allow_duplicate_obs_ids,
                                       registry=obs_registry)
    return ExperimentAmbientLabelMapping(obs_axis, var_axes)


def register_anndatas(experiment_uri, adatas, *, measurement_name, obs_field_name, var_field_name,
                      append_obsm_varm=False, context=None, allow_duplicate_obs_ids=False):
    """Registers AnnData objects for appending to the experiment at
    ``experiment_uri`` (``None``: a new one): see the module's text."""
    inputs = []
    for adata in adatas:
        _validate(adata, append_obsm_varm)
        inputs.append((adata.obs, adata.var, adata.raw.var if adata.raw is not None else None))
    return _register(experiment_uri, inputs, measurement_name, obs_field_name, var_field_name, context,
                     allow_duplicate_obs_ids)


def register_h5ads(experiment_uri, h5ad_file_names, *, measurement_name, obs_field_name, var_field_name,
                   append_obsm_varm=False, context=None, allow_duplicate_obs_ids=False):
    """As :func:`register_anndatas`, for ``.h5ad`` files, of which only obs
    and var are read (the files are opened backed)."""
    if isinstance(h5ad_file_names, (str, bytes)) or hasattr(h5ad_file_names, "__fspath__"):
        h5ad_file_names = [h5ad_file_names]
    return _register(experiment_uri, h5ad_inputs(h5ad_file_names, append_obsm_varm), measurement_name,
                     obs_field_name, var_field_name, context, allow_duplicate_obs_ids)


def h5ad_inputs(paths, append_obsm_varm=False):
    """What registration takes of each ``.h5ad`` file (read backed): its
    obs, var and raw var frames, checked."""
    from ._h5ad import H5ADSource

    inputs = []
    for path in paths:
        with H5ADSource(path) as source:
            _validate(source, append_obsm_varm)
            inputs.append((source.obs, source.var, source.raw.var if source.raw is not None else None))
    return inputs
