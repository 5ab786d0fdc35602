"""``A.meta``: an array's metadata as a mapping; set and deleted keys are
written at once (one metadata file a change) on an array opened for
writing."""

from collections.abc import MutableMapping

from tessera import _native
from tessera._array import _options
from tessera._meta import encode_value, metadata_dict

from .ctx import options_of
from .libtiledb import TileDBError


def encode(value):
    """``(datatype, text)`` for a value, typed as TileDB-Py types it (a
    bool as INT64)."""
    encoded = encode_value(value, "INT64")
    if encoded is None:
        raise TypeError(f"Unsupported item type '{type(value)}'")
    return encoded


class MetadataView(MutableMapping):
    """The read side of a metadata mapping over ``_entries()``."""

    def _entries(self):
        raise NotImplementedError

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        entries = self._entries()
        if key not in entries:
            raise KeyError(key)
        return entries[key]

    def __iter__(self):
        return iter(self._entries())

    def __len__(self):
        return len(self._entries())

    def __contains__(self, key):
        return key in self._entries()

    def keys(self):
        return list(self._entries().keys())

    def values(self):
        return list(self._entries().values())

    def items(self):
        return list(self._entries().items())

    def dump(self):
        for k, v in self._entries().items():
            print(f"### Metadata ###\n- Key: {k}\n- Value: {v}\n")


class Metadata(MetadataView):
    """The metadata of an open array."""

    def __init__(self, array):
        self._array = array

    def _entries(self):
        return metadata_dict(self._array._native.metadata())

    def _put(self, put, delete):
        if self._array.mode not in ("w", "m"):
            raise TileDBError("Array is not opened in write mode")
        a = self._array
        ts = a._timestamp if isinstance(a._timestamp, int) else None
        try:
            _native.put_metadata(a.uri, put, delete, False, ts, a._key, _options(options_of(a._ctx)))
        except Exception as e:
            raise TileDBError(str(e)) from None
        # The handle reads metadata as of its open: open anew to see the change.
        a.reopen()

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        self._put([(key, *encode(value))], [])

    def __delitem__(self, key):
        self._put([], [key])

    def update(self, other=(), **kwargs):
        items = dict(other, **kwargs)
        self._put([(k, *encode(v)) for k, v in items.items()], [])

