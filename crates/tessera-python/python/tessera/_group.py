"""Groups: ``tessera.open_group(uri)``, its members and metadata."""

from . import _native
from ._convert import storage_pairs
from ._array import Array
from ._meta import metadata_dict


class Member:
    """One member of a group: its ``path`` (names joined with ``/``),
    ``type`` (``"array"`` or ``"group"``) and ``uri``."""

    __slots__ = ("path", "type", "uri")

    def __init__(self, path, type, uri):
        self.path, self.type, self.uri = path, type, uri

    def __repr__(self):
        return f"Member(path={self.path!r}, type={self.type!r}, uri={self.uri!r})"


class Group:
    """A TileDB group (TileDB-SOMA experiments are groups of groups of
    arrays), opened at a time. ``G["ms/RNA/X/data"]`` opens a member array
    or group by its path."""

    def __init__(self, native, key=None, timestamp=None):
        self._native = native
        self._key = key
        self._timestamp = timestamp

    @property
    def uri(self):
        return self._native.uri

    def members(self, recursive=False):
        """The members sorted by path; ``recursive`` lists member groups' members too."""
        return [Member(*m) for m in self._native.members(recursive)]

    @property
    def meta(self):
        """The group's metadata as a dict, as of the open (read once: beside
        the open on object stores, else when first asked for)."""
        return metadata_dict(self._native.metadata())

    def open_member(self, member):
        """Opens ``member`` (a :class:`Member`), an array or a group, at the
        group's timestamp and key, through the group's storage where it
        lies in the same store (on an object store: one client and pool
        of connections for the group and its members)."""
        if member.type == "array":
            native = self._native.open_array(member.uri, self._timestamp, self._key)
            return Array(native, key=self._key, timestamp=self._timestamp)
        native = self._native.open_group(member.uri, self._timestamp, self._key)
        return Group(native, key=self._key, timestamp=self._timestamp)

    def view(self, attr=None, subarray=None, dims=None, budget=64 << 20, pixels=400):
        """A page of pictures of the group (:class:`View`): its member tree
        with each member's kind, shape and size, then a page section per
        member array (options as :meth:`Array.view`, applied to the arrays
        that have what they name)."""
        from ._view import View, view_options

        return View(*self._native.view(view_options(attr, subarray, dims, budget, pixels)))

    def __contains__(self, path):
        return any(m.path == path for m in self.members(recursive="/" in path))

    def __getitem__(self, path):
        for m in self.members(recursive="/" in path):
            if m.path == path:
                return self.open_member(m)
        raise KeyError(path)

    def __iter__(self):
        return iter(m.path for m in self.members())

    def __len__(self):
        return len(self.members())

    def __repr__(self):
        return f"tessera.Group({self.uri!r}, {len(self)} members)"


def object_type(uri, storage_options=None):
    """``"array"``, ``"group"`` or ``None`` (nothing TileDB wrote) for what
    is at ``uri``, from one listing. A store that does not answer raises
    :class:`TesseraError` rather than passing for ``None``.

        >>> import tessera
        >>> tessera.object_type("testdata/soma/experiment_dense/experiment")
        'group'
        >>> tessera.object_type("testdata/tiledb-0.36.1/sparse_2d/array")
        'array'
        >>> tessera.object_type("testdata/no_such_array") is None
        True
    """
    return _native.object_type(str(uri), storage_pairs(storage_options))


def open_group(uri, timestamp=None, key=None, storage_options=None):
    """Opens the group at ``uri`` (a path or an object store URI);
    ``storage_options`` as :func:`tessera.open`'s, for the group and the
    members opened from it."""
    native = _native.open_group(str(uri), timestamp, key, storage_pairs(storage_options))
    return Group(native, key=key, timestamp=timestamp)
