"""What every SOMA object has: its URI, metadata, type and open state."""

from ._errors import SOMAError, SOMAValueError
from ._metadata import Metadata, put


class Closeable:
    """``with``-block use, as tiledbsoma's objects and queries have it."""

    closed = False

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SOMAObject(Closeable):
    """A SOMA object opened for reading (``mode="r"``), writing (``"w"``) or
    deleting cells (``"d"``).
    ``metadata`` is a mapping; opened for writing, setting or deleting a
    key writes it at once."""

    soma_type = None
    _is_group = False

    def __init__(self, uri, metadata, mode="r", options=None):
        if mode not in ("r", "w", "d"):
            raise SOMAValueError(f"{uri}: mode {mode!r}: expected 'r', 'w' or 'd'")
        self.uri = uri
        self.mode = mode
        self._options = dict(options or {})
        self.metadata = Metadata(self, metadata)

    def _put_metadata(self, put_entries, delete):
        put(self.uri, put_entries, delete, self._is_group, self._options)

    def verify_open_for_writing(self):
        """Raises unless the object is open for writing."""
        if self.mode != "w" or self.closed:
            raise SOMAError(f"{self.uri}: not open for writing (open it with mode='w')")

    def verify_open_for_deleting(self):
        """Raises unless the object is open for deleting (mode 'd', or 'w')."""
        if self.mode not in ("d", "w") or self.closed:
            raise SOMAError(f"{self.uri}: not open for deleting (open it with mode='d')")

    def __repr__(self):
        return f"<{type(self).__name__} {self.uri!r}>"

    @classmethod
    def open(cls, uri, mode="r", *, tiledb_timestamp=None, context=None, platform_config=None):
        """Opens the object at ``uri``, which must be of this class
        (``Experiment.open(uri)``), as :func:`tessera.soma.open` does."""
        # Imported here: _collection builds on this module.
        from ._collection import open as open_soma

        return open_soma(uri, mode, soma_type=cls, context=context, tiledb_timestamp=tiledb_timestamp)


def check_unpartitioned(partitions):
    """Reads return whole results, as tiledbsoma's do: ``partitions`` may
    only be none, or partition 0 of 1 (``somacore.IOfN(0, 1)``)."""
    if partitions and (getattr(partitions, "i", None), getattr(partitions, "n", None)) != (0, 1):
        raise SOMAValueError(f"partitioned reads are not supported ({partitions!r}): read the whole result")
