"""Registration for appends, as ``tiledbsoma.io.register_anndatas`` and
``register_h5ads`` do it: every obs and var label of the inputs gets a
``soma_joinid`` (labels the experiment holds keep theirs, new ones follow
its largest), categoricals gather their categories, and
``prepare_experiment`` grows the experiment's domains and enumerations
before any input is written, so inputs may then be written side by side.
"""

import numpy as np

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


class AxisAmbientLabelMapping:
    """Every registered label of one axis and its joinid (``joinid_map``: a
    frame indexed by label, column ``soma_joinid``), and each categorical
    column's categories (``enum_values``)."""

    def __init__(self, field_name, joinid_map, enum_values, allow_duplicate_ids=False):
        self.field_name = field_name
        self.joinid_map = joinid_map
        self.enum_values = dict(enum_values)
        self.allow_duplicate_ids = allow_duplicate_ids
        self.shape = int(joinid_map["soma_joinid"].max()) + 1 if len(joinid_map) else 0

    def id_mapping_from_values(self, input_ids):
        """The joinids of the labels ``input_ids``, which must be registered."""
        found = self.joinid_map.reindex(labels=input_ids, fill_value=-1)["soma_joinid"]
        if (found == -1).any():
            missing = list(np.asarray(input_ids)[(found == -1).to_numpy()][:5])
            raise SOMAValueError(f"{self.field_name} values {missing} were not found in the registration data")
        return AxisIDMapping(found.to_numpy())

    def id_mapping_from_dataframe(self, df):
        values = labels(df, self.field_name)
        if not values.is_unique:
            raise SOMAValueError(f"Non-unique registration values have been provided in field {self.field_name}.")
        return self.id_mapping_from_values(values.astype(str))


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
            return AxisIDMapping(axis.joinid_map.loc[labels(df, axis.field_name)]["soma_joinid"].to_numpy())

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
        obs = self.obs_axis
        subset = AxisAmbientLabelMapping(obs.field_name, obs.joinid_map.loc[labels(adata.obs, obs.field_name)],
                                         obs.enum_values, obs.allow_duplicate_ids)
        subset.shape = obs.shape
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
            if len(axis.joinid_map) and (name not in experiment.ms or "var" not in experiment.ms[name]):
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
    """One axis' labels and categoricals gathered from the inputs."""

    def __init__(self):
        self.labels = []
        self.categories = {}

    def add(self, df, field_name):
        import pandas as pd

        self.labels.append(labels(df, field_name))
        for column, values in df.items():
            if isinstance(values.dtype, pd.CategoricalDtype):
                _merge(self.categories, str(column), values.dtype)

    def index(self):
        import pandas as pd

        found = [i for i in self.labels if len(i)]
        if not found:
            return pd.Index([])
        if any(i.dtype != found[0].dtype for i in found):
            raise SOMAError("All AnnData must have a common dtype for their index.")
        return found[0].append(found[1:]) if len(found) > 1 else found[0]


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


def _existing(experiment_uri, obs_field_name, var_field_name, context):
    """The joinid maps and categories of an existing experiment (or none)."""
    import pandas as pd

    from ._collection import Experiment
    from ._errors import DoesNotExistError

    try:
        experiment = Experiment.open(experiment_uri, context=context)
    except DoesNotExistError:
        return pd.DataFrame(), {}, {}, {}

    def joinid_map(frame, field):
        table = frame.read(column_names=["soma_joinid", field]).concat().to_pandas()
        return table.set_index(field)

    def categories(frame):
        import pyarrow as pa

        names = [f.name for f in frame.schema if pa.types.is_dictionary(f.type)]
        values = frame.get_enumeration_values(names)
        return {n: pd.CategoricalDtype(values[n].to_pylist(), ordered=frame.schema.field(n).type.ordered)
                for n in names}

    obs_map = joinid_map(experiment.obs, obs_field_name)
    var_maps, var_categories = {}, {}
    for name in experiment.ms.keys():
        ms = experiment.ms[name]
        if "var" in ms and var_field_name in ms.var.keys():
            var_maps[name] = joinid_map(ms.var, var_field_name)
            var_categories[name] = categories(ms.var)
    return obs_map, var_maps, categories(experiment.obs), var_categories


def _joinids(labels_index, previous, raise_on_duplicates):
    """Labels to joinids: the previous map, then each new label at the
    next joinid."""
    import pandas as pd

    start = 0
    maps = []
    if len(previous):
        new = labels_index.difference(previous.index, sort=False)
        if raise_on_duplicates and len(new) != len(labels_index):
            _duplicate_obs(labels_index.intersection(previous.index))
        labels_index = new
        start = int(previous["soma_joinid"].max()) + 1
        maps.append(previous)
    joinids = np.arange(start, start + len(labels_index), dtype=np.int64)
    maps.append(pd.DataFrame(index=labels_index, data={"soma_joinid": joinids}))
    return pd.concat(maps)


def _duplicate_obs(examples):
    raise SOMAError(f"Duplicate obs IDs found during registration. {len(examples)} obs IDs are not unique across "
                    f"the provided inputs. Example duplicate obs ID(s): {list(examples[:4])}. Please ensure obs IDs "
                    "are unique across all inputs for append operations, or pass allow_duplicate_obs_ids=True to "
                    "add a new Measurement to existing observations.")


def _register(experiment_uri, inputs, measurement_name, obs_field_name, var_field_name, context,
              allow_duplicate_obs_ids):
    """Registration over ``inputs``: ``(obs, var, raw_var or None)`` frames."""
    obs, var, raw = _Axis(), _Axis(), _Axis()
    for obs_df, var_df, raw_df in inputs:
        obs.add(obs_df, obs_field_name)
        var.add(var_df, var_field_name)
        if raw_df is not None:
            raw.add(raw_df, var_field_name)
    obs_index = obs.index()
    if allow_duplicate_obs_ids:
        obs_index = obs_index.drop_duplicates()
    elif not obs_index.is_unique:
        _duplicate_obs(obs_index[obs_index.duplicated()])
    if experiment_uri is None:
        import pandas as pd

        old_obs, old_vars, old_obs_cats, old_var_cats = pd.DataFrame(), {}, {}, {}
    else:
        old_obs, old_vars, old_obs_cats, old_var_cats = _existing(str(experiment_uri), obs_field_name,
                                                                  var_field_name, context)
    obs_map = _joinids(obs_index, old_obs, not allow_duplicate_obs_ids)
    obs_cats = dict(old_obs_cats)
    for column, dtype in obs.categories.items():
        _merge(obs_cats, column, dtype)
    var_axes = {}
    axes = [(measurement_name, var)] + ([("raw", raw)] if raw.labels else [])
    for name, axis in axes:
        import pandas as pd

        previous = old_vars.get(name, pd.DataFrame())
        cats = dict(old_var_cats.get(name, {}))
        for column, dtype in axis.categories.items():
            _merge(cats, column, dtype)
        var_axes[name] = AxisAmbientLabelMapping(var_field_name,
                                                 _joinids(axis.index().drop_duplicates(), previous, False),
                                                 cats, True)
    for name, previous in old_vars.items():
        if name not in var_axes:
            var_axes[name] = AxisAmbientLabelMapping(var_field_name, previous, old_var_cats.get(name, {}), True)
    obs_axis = AxisAmbientLabelMapping(obs_field_name, obs_map, obs_cats, allow_duplicate_obs_ids)
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
    from ._h5ad import H5ADSource

    if isinstance(h5ad_file_names, (str, bytes)) or hasattr(h5ad_file_names, "__fspath__"):
        h5ad_file_names = [h5ad_file_names]
    inputs = []
    for path in h5ad_file_names:
        with H5ADSource(path) as source:
            _validate(source, append_obsm_varm)
            inputs.append((source.obs, source.var, source.raw.var if source.raw is not None else None))
    return _register(experiment_uri, inputs, measurement_name, obs_field_name, var_field_name, context,
                     allow_duplicate_obs_ids)
