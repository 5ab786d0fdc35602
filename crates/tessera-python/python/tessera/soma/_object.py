"""What every SOMA object has: its URI, metadata, type and open state."""

from ._errors import SOMAValueError


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
    soma_type = None

    def __init__(self, uri, metadata, mode="r"):
        if mode != "r":
            raise SOMAValueError(f"{uri}: tessera.soma opens for reading only (mode 'r'), not {mode!r}")
        self.uri = uri
        self.metadata = dict(metadata)
        self.mode = mode

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
