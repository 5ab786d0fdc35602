"""Axis queries: the cells (obs) and features (var) a query selects in a
measurement, and X, obs and var restricted to them."""

import numpy as np
import pyarrow as pa

from tessera._convert import from_numbers, numbers

from ._anndata import build
from ._errors import SOMAKeyError, SOMAValueError
from ._object import Closeable


class AxisQuery:
    """A selection on one axis: ``coords`` (of ``soma_joinid``) and a
    ``value_filter`` on its columns; by default everything."""

    def __init__(self, *, value_filter=None, coords=()):
        self.value_filter = value_filter
        self.coords = tuple(coords) if coords is not None else ()

    def __repr__(self):
        return f"AxisQuery(value_filter={self.value_filter!r}, coords={self.coords!r})"


class ExperimentAxisQuery(Closeable):
    """``Experiment.axis_query``'s result."""

    def __init__(self, experiment, measurement_name, obs_query=None, var_query=None):
        if measurement_name not in experiment.ms:
            raise SOMAValueError(f"{experiment.uri}: no measurement {measurement_name!r}")
        self.experiment = experiment
        self.measurement_name = measurement_name
        self._ms = experiment.ms[measurement_name]
        self._queries = {"obs": obs_query or AxisQuery(), "var": var_query or AxisQuery()}
        self._joinids = {}

    def _frame(self, axis):
        return self.experiment.obs if axis == "obs" else self._ms.var

    def _axis(self, axis, column_names, result_order=None, partitions=None):
        q = self._queries[axis]
        return self._frame(axis).read(q.coords, column_names=column_names, value_filter=q.value_filter,
                                      result_order=result_order, partitions=partitions)

    def obs(self, *, column_names=None, batch_size=None, partitions=None, result_order=None,
            platform_config=None):
        """The selected rows of ``obs`` (a read iterator of tables)."""
        return self._axis("obs", column_names, result_order, partitions)

    def var(self, *, column_names=None, batch_size=None, partitions=None, result_order=None,
            platform_config=None):
        """The selected rows of the measurement's ``var``."""
        return self._axis("var", column_names, result_order, partitions)

    def _ids(self, axis):
        if axis not in self._joinids:
            ids = numbers(self._axis(axis, ["soma_joinid"]).concat().column("soma_joinid"))
            self._joinids[axis] = from_numbers(np.sort(ids).astype(np.int64, copy=False))
        return self._joinids[axis]

    def obs_joinids(self):
        """The selected cells' ``soma_joinid``s, ascending (a ``pyarrow.Int64Array``)."""
        return self._ids("obs")

    def var_joinids(self):
        """The selected features' ``soma_joinid``s, ascending."""
        return self._ids("var")

    @property
    def n_obs(self):
        return len(self.obs_joinids())

    @property
    def n_vars(self):
        return len(self.var_joinids())

    def X(self, layer_name, *, batch_size=None, partitions=None, result_order=None, platform_config=None):
        """The cells of X layer ``layer_name`` in the selected rows and columns."""
        if layer_name not in self._ms.X:
            raise SOMAKeyError(f"{self._ms.uri}: no X layer {layer_name!r}")
        return self._ms.X[layer_name].read((self._coords("obs"), self._coords("var")),
                                           result_order=result_order, partitions=partitions)

    def _coords(self, axis):
        """The axis's coordinates for a read: ``None`` where the query
        selects every row, else the selected joinids."""
        q = self._queries[axis]
        if q.value_filter is None and _whole(q.coords):
            return None
        return self._ids(axis)

    def to_anndata(self, X_name="data", *, column_names=None, X_layers=(), obsm_layers=(),
                   obsp_layers=(), varm_layers=(), varp_layers=(), drop_levels=False,
                   dask=None, obs_id_name=None, var_id_name=None):
        """The selection as an ``anndata.AnnData``: obs and var as pandas
        (categoricals from enumerations, indexed by ``obs_id`` / ``var_id``
        or the index name the frame's metadata keeps), X as a scipy CSR
        matrix in joinid order, more X layers, obsm/varm (dense rows)
        and obsp/varp matrices on request. With ``dask`` (tiledbsoma's
        ``SOMADaskConfig``: ``{"chunk_size": rows}`` or ``{"chunk_size":
        (rows, columns)}``, and ``tiledb_config``), X and the X layers are
        Dask arrays of CSR blocks read on the workers."""
        return build(self, X_name, column_names or {}, X_layers, obsm_layers, obsp_layers,
                     varm_layers, varp_layers, drop_levels, obs_id_name, var_id_name, dask)


def _whole(coords):
    return all(c is None or (isinstance(c, slice) and c.start is None and c.stop is None) for c in coords)

