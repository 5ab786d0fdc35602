"""``open`` and SOMA's collections (Collection, Experiment, Measurement):
TileDB groups whose ``soma_object_type`` metadata names what they are."""

import time

import tessera
from tessera import _native
from tessera._convert import storage_pairs
from tessera._group import Member

from . import _context
from ._arrays import DataFrame, DenseNDArray, SparseNDArray
from ._errors import DoesNotExistError, SOMAError, SOMAKeyError, SOMAValueError
from ._object import SOMAObject
from ._query import ExperimentAxisQuery
from ._writing import ENCODING_VERSION, create_object


class Collection(SOMAObject):
    """A SOMA Collection: named members, each a collection or an array,
    opened when first asked for."""

    soma_type = "SOMACollection"
    _is_group = True
    # Metadata keys a new object of the class gets besides its type.
    _create_metadata = {}

    def __init__(self, group, mode="r", timestamp=None, options=None):
        super().__init__(group.uri, group.meta, mode, options)
        self._group = group
        self._timestamp = timestamp
        self._opened_ms = time.time_ns() // 1_000_000
        self._members = {m.path: m for m in group.members()}
        self._opened = {}

    def __reduce__(self):
        """Pickles as what opens it again, anywhere (a Dask worker, say):
        the URI, mode, storage options and the timestamp it was opened at
        (opened at none: as of its open)."""
        timestamp = self._opened_ms if self._timestamp is None else self._timestamp
        return (_open, (self.uri, self.mode, timestamp, self._options))

    @classmethod
    def create(cls, uri, *, platform_config=None, context=None, tiledb_timestamp=None):
        """Creates an empty collection of this class at ``uri`` and returns
        it open for writing; :class:`AlreadyExistsError` if something is
        there."""
        uri = str(uri)
        options = _context.options_for(uri, context)
        metadata = {"soma_object_type": cls.soma_type, "soma_encoding_version": ENCODING_VERSION,
                    **cls._create_metadata}
        create_object(uri, lambda: _native.create_group(uri, storage_pairs(options)), metadata, True, options)
        return open(uri, "w", soma_type=cls, context=context)

    @classmethod
    def exists(cls, uri, context=None):
        """Whether a SOMA object of this class is at ``uri``."""
        try:
            return open(uri, context=context).soma_type == cls.soma_type
        except SOMAError:
            return False

    # Members made and added, as tiledbsoma's collections make them: at
    # ``uri``, else in the collection's folder under ``key``, listed by a
    # URI relative to the collection when they lie in its folder.

    def add_new_collection(self, key, kind=None, *, uri=None, platform_config=None, **kwargs):
        """Creates a collection (``kind``: Collection, Experiment or
        Measurement, default Collection) and adds it under ``key``."""
        kind = Collection if kind is None else kind
        return self._add_new(key, uri, lambda u: kind.create(u, context=self._context(), **kwargs))

    def add_new_dataframe(self, key, *, uri=None, **kwargs):
        """Creates a :class:`DataFrame` (``kwargs`` as ``DataFrame.create``'s)
        and adds it under ``key``."""
        return self._add_new(key, uri, lambda u: DataFrame.create(u, context=self._context(), **kwargs))

    def add_new_sparse_ndarray(self, key, *, uri=None, **kwargs):
        """Creates a :class:`SparseNDArray` and adds it under ``key``."""
        return self._add_new(key, uri, lambda u: SparseNDArray.create(u, context=self._context(), **kwargs))

    def add_new_dense_ndarray(self, key, *, uri=None, **kwargs):
        """Creates a :class:`DenseNDArray` and adds it under ``key``."""
        return self._add_new(key, uri, lambda u: DenseNDArray.create(u, context=self._context(), **kwargs))

    def _context(self):
        return _context.with_options(self._options)

    def _add_new(self, key, uri, create):
        self.verify_open_for_writing()
        if key in self._members:
            raise SOMAKeyError(f"{self.uri}: a member {key!r} exists already")
        child_uri = _child_uri(self.uri, key) if uri is None else str(uri)
        child = create(child_uri)
        self.set(key, child, use_relative_uri=None if uri is None else False)
        return child

    def set(self, key, value, *, use_relative_uri=None):
        """Adds the SOMA object ``value`` (created elsewhere, or by the
        ``add_new_*`` methods) as the member ``key``: listed relative to the
        collection when it lies in the collection's folder (or when
        ``use_relative_uri`` says so), else by its URI."""
        self.verify_open_for_writing()
        inside = value.uri.startswith(self.uri.rstrip("/") + "/")
        relative = inside if use_relative_uri is None else bool(use_relative_uri)
        if relative and not inside:
            raise SOMAValueError(f"{self.uri}: {value.uri} is not in the collection's folder: no relative URI")
        member_uri = value.uri[len(self.uri.rstrip("/")) + 1:] if relative else value.uri
        _native.change_members(self.uri, [(member_uri, key, relative)], [], None, storage_pairs(self._options))
        kind = "group" if isinstance(value, Collection) else "array"
        self._members[key] = Member(key, kind, value.uri)
        self._opened[key] = value
        return self

    def __setitem__(self, key, value):
        self.set(key, value)

    def __delitem__(self, key):
        self.verify_open_for_writing()
        if key not in self._members:
            raise SOMAKeyError(f"{self.uri}: no member {key!r}")
        _native.change_members(self.uri, [], [key], None, storage_pairs(self._options))
        del self._members[key]
        self._opened.pop(key, None)

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
            self._opened[name] = _as_soma(self._group.open_member(m), self.mode, self._timestamp, self._options)
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
    _create_metadata = {"dataset_type": "soma"}
    _named = ("obs", "ms")

    def axis_query(self, measurement_name, *, obs_query=None, var_query=None):
        """The cells and features ``obs_query`` and ``var_query`` select
        (each an :class:`AxisQuery`), in the measurement ``measurement_name``."""
        return ExperimentAxisQuery(self, measurement_name, obs_query, var_query)


_COLLECTIONS = {c.soma_type: c for c in (Collection, Measurement, Experiment)}
_ARRAYS = {c.soma_type: c for c in (DataFrame, SparseNDArray, DenseNDArray)}


def _child_uri(parent, key):
    if not key or "/" in key or key in (".", ".."):
        raise SOMAValueError(f"{parent}: {key!r} cannot name a member in the collection's folder")
    return parent.rstrip("/") + "/" + key


def _open(uri, mode, timestamp, options):
    try:
        obj = tessera.open_group(uri, timestamp=timestamp, storage_options=options)
    except tessera.TesseraError as group_error:
        try:
            obj = tessera.open(uri, timestamp=timestamp, storage_options=options)
        except tessera.TesseraError as array_error:
            # Told apart by what the folder holds, not by the errors' words;
            # a store that does not answer is no proof that nothing is there.
            try:
                missing = tessera.object_type(uri, storage_options=options) is None
            except tessera.TesseraError:
                missing = False
            if missing:
                raise DoesNotExistError(f"{uri}: not a SOMA object, nothing there: {group_error}; "
                                        f"{array_error}") from None
            raise SOMAError(f"{uri}: not a SOMA object: {group_error}; {array_error}") from None
    return _as_soma(obj, mode, timestamp, options)


def _as_soma(obj, mode, timestamp, options=None):
    """An opened group or array as the SOMA class its ``soma_object_type`` names."""
    kind = obj.meta.get("soma_object_type")
    if isinstance(obj, tessera.Array):
        if kind not in _ARRAYS:
            raise SOMAError(f"{obj.uri}: an array whose soma_object_type is {kind!r}, not a SOMA array")
        return _ARRAYS[kind](obj, mode, options)
    if kind not in _COLLECTIONS:
        raise SOMAError(f"{obj.uri}: a group whose soma_object_type is {kind!r}, not a SOMA collection")
    return _COLLECTIONS[kind](obj, mode, timestamp, options)


def open(uri, mode="r", *, soma_type=None, context=None, tiledb_timestamp=None):
    """Opens the SOMA object at ``uri`` (a path or an object store URI) as
    the class its ``soma_object_type`` names; ``soma_type`` (a class or its
    name) checks it. ``tiledb_timestamp`` (milliseconds) opens it as of
    that time. ``context`` (a :class:`SOMATileDBContext`, tessera.soma's
    or tiledbsoma's) says how to reach an object store."""
    uri = str(uri)
    obj = _open(uri, mode, tiledb_timestamp, _context.options_for(uri, context))
    if soma_type is not None:
        want = soma_type if isinstance(soma_type, str) else soma_type.soma_type
        if obj.soma_type != want:
            raise SOMAError(f"{uri}: a {obj.soma_type}, not a {want}")
    return obj
