"""``ArraySchemaEvolution``: changes to an existing array's schema, made
in one step as libtiledb makes them (a new schema file, the array's data
untouched): attributes and enumerations added or dropped, enumerations
extended, the current domain expanded.

    >>> import tempfile, numpy as np
    >>> import tessera.tiledb as tiledb
    >>> path = tempfile.mkdtemp() + "/a"
    >>> dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 3), tile=4, dtype=np.int64))
    >>> tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    >>> se = tiledb.ArraySchemaEvolution()
    >>> se.add_attribute(tiledb.Attr("b", dtype=np.float64, fill=0.5))
    >>> se.array_evolve(path)
    >>> tiledb.open(path)[:]["b"]
    array([0.5, 0.5, 0.5, 0.5])
"""

import json

from tessera import _native

from ._open import errors, open_native
from .array_schema import ArraySchema
from .ctx import storage
from .libtiledb import TileDBError


class ArraySchemaEvolution:
    """The changes to make (see the module); ``array_evolve(uri)`` makes
    them."""

    def __init__(self, ctx=None):
        self._ctx = ctx
        self._add_attributes = []
        self._drop_attributes = []
        self._add_enumerations = []
        self._drop_enumerations = []
        self._extend_enumerations = []
        self._current_domain = None
        self._timestamp = None

    def add_attribute(self, attr):
        if any(a.name == attr.name for a in self._add_attributes):
            raise TileDBError(f"Cannot add attribute {attr.name!r}: Input attribute name is already there")
        self._add_attributes.append(attr)

    def drop_attribute(self, name):
        self._drop_attributes.append(name)

    def add_enumeration(self, enumeration):
        self._add_enumerations.append(enumeration)

    def drop_enumeration(self, name):
        self._drop_enumerations.append(name)

    def extend_enumeration(self, enumeration):
        """Extends the array's enumeration of that name to ``enumeration``'s
        values (those it holds, then new ones)."""
        self._extend_enumerations.append(enumeration)

    def expand_current_domain(self, current_domain):
        self._current_domain = current_domain

    def timestamp(self, timestamp):
        """Names the new schema for ``timestamp`` (milliseconds)."""
        if not isinstance(timestamp, int) or timestamp < 0:
            raise TileDBError(f"timestamp must be a non-negative integer, not {timestamp!r}")
        self._timestamp = timestamp

    def _doc(self, uri, key):
        doc = {
            "add_attributes": [a.to_json() for a in self._add_attributes],
            "drop_attributes": list(self._drop_attributes),
            "add_enumerations": [e.to_json() for e in self._add_enumerations],
            "drop_enumerations": list(self._drop_enumerations),
        }
        if self._extend_enumerations:
            current = ArraySchema.from_json(open_native(uri, self._ctx, key).schema_json())
            doc["extend_enumerations"] = {e.name: _appended(current, e) for e in self._extend_enumerations}
        if self._current_domain is not None:
            doc["current_domain"] = self._current_domain.to_json()
        return doc

    def array_evolve(self, uri, key=None):
        """Evolves the schema of the array at ``uri``."""
        uri = str(uri)
        key = key.decode() if isinstance(key, bytes) else key
        doc = self._doc(uri, key)
        errors(_native.evolve, uri, json.dumps(doc), key, storage(uri, self._ctx), self._timestamp)


def _appended(schema, enumeration):
    """The values ``enumeration`` adds to the schema's enumeration of the
    same name, as JSON."""
    held = schema.enum(enumeration.name)
    old, new = list(held.values()), list(enumeration.values())
    if new[:len(old)] != old:
        raise TileDBError(f"enumeration {enumeration.name!r}: an extension keeps the values held, in order")
    tail = enumeration.to_json()["values"][len(old):]
    return tail
