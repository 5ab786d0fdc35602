"""What every SOMA object has: its URI, metadata, type and open state."""


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
            raise ValueError(f"{uri}: tessera.soma opens for reading only (mode 'r'), not {mode!r}")
        self.uri = uri
        self.metadata = dict(metadata)
        self.mode = mode

    def __repr__(self):
        return f"<{type(self).__name__} {self.uri!r}>"
