"""``open`` and SOMA's collections (Collection, Experiment, Measurement):
TileDB groups whose ``soma_object_type`` metadata names what they are."""

import tessera

from . import _context
from ._arrays import DataFrame, DenseNDArray, SparseNDArray
from ._errors import SOMAError, SOMAKeyError
from ._object import SOMAObject
from ._query import ExperimentAxisQuery


class Collection(SOMAObject):
    """A SOMA Collection: named members, each a collection or an array,
    opened when first asked for."""

    soma_type = "SOMACollection"

    def __init__(self, group, mode="r", timestamp=None):
        super().__init__(group.uri, group.meta, mode)
        self._group = group
        self._timestamp = timestamp
        self._members = {m.path: m for m in group.members()}
        self._opened = {}

    def keys(self):
        return self._members.keys()

    def __iter__(self):
        return iter(self._members)

    def __len__(self):
        return len(self._members)

    def __contains__(self, name):
        return name in self._members

    def __getitem__(self, name):
        if name not in self._opened:
            m = self._members.get(name)
            if m is None:
                raise SOMAKeyError(f"{self.uri}: no member {name!r} (members: {', '.join(sorted(self._members))})")
            self._opened[name] = _as_soma(self._group.open_member(m), self.mode, self._timestamp)
        return self._opened[name]

    def get(self, name, default=None):
        return self[name] if name in self else default

    def items(self):
        return ((k, self[k]) for k in self._members)

    def values(self):
        return (self[k] for k in self._members)

    def __getattr__(self, name):
        # Members by attribute (``exp.obs``, ``ms.X``) on collections that
        # name them in SOMA.
        if name.startswith("_") or name not in type(self)._named:
            raise AttributeError(name)
        return self[name]

    _named = ()


class Measurement(Collection):
    """A SOMA Measurement: ``var``, ``X`` layers, ``obsm``, ``obsp``, ``varm``, ``varp``."""

    soma_type = "SOMAMeasurement"
    _named = ("var", "X", "obsm", "obsp", "varm", "varp")


class Experiment(Collection):
    """A SOMA Experiment: ``obs`` and the measurements in ``ms``."""

    soma_type = "SOMAExperiment"
    _named = ("obs", "ms")

    def axis_query(self, measurement_name, *, obs_query=None, var_query=None):
        """The cells and features ``obs_query`` and ``var_query`` select
        (each an :class:`AxisQuery`), in the measurement ``measurement_name``."""
        return ExperimentAxisQuery(self, measurement_name, obs_query, var_query)


_COLLECTIONS = {c.soma_type: c for c in (Collection, Measurement, Experiment)}
_ARRAYS = {c.soma_type: c for c in (DataFrame, SparseNDArray, DenseNDArray)}


def _open(uri, mode, timestamp, options):
    try:
        obj = tessera.open_group(uri, timestamp=timestamp, storage_options=options)
    except tessera.TesseraError as group_error:
        try:
            obj = tessera.open(uri, timestamp=timestamp, storage_options=options)
        except tessera.TesseraError as array_error:
            raise SOMAError(f"{uri}: not a SOMA object: {group_error}; {array_error}") from None
    return _as_soma(obj, mode, timestamp)


def _as_soma(obj, mode, timestamp):
    """An opened group or array as the SOMA class its ``soma_object_type`` names."""
    kind = obj.meta.get("soma_object_type")
    if isinstance(obj, tessera.Array):
        if kind not in _ARRAYS:
            raise SOMAError(f"{obj.uri}: an array whose soma_object_type is {kind!r}, not a SOMA array")
        return _ARRAYS[kind](obj, mode)
    if kind not in _COLLECTIONS:
        raise SOMAError(f"{obj.uri}: a group whose soma_object_type is {kind!r}, not a SOMA collection")
    return _COLLECTIONS[kind](obj, mode, timestamp)


def open(uri, mode="r", *, soma_type=None, context=None, tiledb_timestamp=None):
    """Opens the SOMA object at ``uri`` (a path or an object store URI) as
    the class its ``soma_object_type`` names; ``soma_type`` (a class or its
    name) checks it. ``tiledb_timestamp`` (milliseconds) opens it as of
    that time. ``context`` (a :class:`SOMATileDBContext`, tessera.soma's
    or tiledbsoma's) says how to reach an object store."""
    uri = str(uri)
    # Storage options configure object stores; local paths take none.
    options = _context.of(context)
    options = options if _context.is_object_store(uri) else {}
    obj = _open(uri, mode, tiledb_timestamp, options)
    if soma_type is not None:
        want = soma_type if isinstance(soma_type, str) else soma_type.soma_type
        if obj.soma_type != want:
            raise SOMAError(f"{uri}: a {obj.soma_type}, not a {want}")
    return obj
