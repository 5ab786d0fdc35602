"""A SOMA object's ``metadata``: a mapping that, on an object opened for
writing, puts and deletes keys of the TileDB array's or group's metadata
as it is changed (one metadata file a change, as libtiledb writes it)."""

from collections.abc import MutableMapping

from tessera import _native
from tessera._convert import storage_pairs
from tessera._meta import encode_value

from ._errors import SOMAError, SOMATypeError


def encode(key, value):
    """``(datatype, text)`` for a metadata value, typed as tiledbsoma types
    it: str UTF-8, bool BOOL, int INT64, float FLOAT64, bytes BLOB, numpy
    scalars and 1-D arrays as their dtype."""
    encoded = encode_value(value, "BOOL")
    if encoded is None:
        raise SOMATypeError(f"metadata {key!r}: cannot store a {type(value).__name__} (use str, bytes, bool, int, "
                            "float or a 1-D array of numbers)")
    return encoded


class Metadata(MutableMapping):
    """Metadata keys and values. Changes need the object opened for writing
    (``mode="w"``) and are written at once."""

    def __init__(self, owner, entries):
        self._owner = owner
        self._entries = dict(entries)

    def _check_writable(self):
        if self._owner.mode != "w" or self._owner.closed:
            raise SOMAError(f"{self._owner.uri}: metadata changes need the object open for writing (mode 'w')")

    def __getitem__(self, key):
        return self._entries[key]

    def __setitem__(self, key, value):
        self.update({key: value})

    def __delitem__(self, key):
        self._check_writable()
        if key not in self._entries:
            raise KeyError(key)
        self._owner._put_metadata([], [key])
        del self._entries[key]

    def update(self, other=(), **kwargs):
        """Puts every key of ``other`` and ``kwargs`` as one metadata file."""
        self._check_writable()
        changes = dict(other, **kwargs)
        if not changes:
            return
        for key in changes:
            if not isinstance(key, str):
                raise SOMATypeError(f"metadata keys are strings, not {key!r}")
        self._owner._put_metadata([(k, *encode(k, v)) for k, v in changes.items()], [])
        self._entries.update(changes)

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return repr(self._entries)

    def __eq__(self, other):
        return dict(self) == dict(other)


def put(uri, put_entries, delete, is_group, options, timestamp=None):
    """Writes one metadata file of ``put_entries`` ``(key, datatype, text)``
    and deleted keys ``delete`` to the object at ``uri``."""
    return _native.put_metadata(uri, put_entries, delete, is_group, timestamp, None, storage_pairs(options))
