"""``SOMATileDBContext``: where and how to reach an object store, given as
tiledbsoma's context gives it (libtiledb's configuration keys)."""

from tessera._storage_keys import storage_options

from ._errors import SOMATypeError


class SOMATileDBContext:
    """The storage configuration reads use: ``tiledb_config`` holds
    libtiledb's keys, as tiledbsoma's context does (``vfs.s3.region``,
    ``vfs.s3.endpoint_override`` with ``vfs.s3.scheme``,
    ``vfs.s3.aws_access_key_id``, ``vfs.azure.storage_account_name``,
    ``vfs.azure.blob_endpoint``, ...). Storage keys set over the
    environment's (``AWS_*``, ``AZURE_*``, ``GOOGLE_*``); other keys are
    kept and do not apply.

        >>> ctx = SOMATileDBContext(tiledb_config={"vfs.s3.region": "eu-west-1"})
        >>> ctx.storage_options()
        {'aws_region': 'eu-west-1'}
    """

    def __init__(self, tiledb_config=None, timestamp=None, threadpool=None):
        self.tiledb_config = dict(tiledb_config or {})
        self.timestamp = timestamp
        self.threadpool = threadpool
        self._options = None

    def replace(self, *, tiledb_config=None, **changes):
        """A copy with ``tiledb_config`` merged over this one's (a key set
        to ``None`` removed) and other fields replaced."""
        config = dict(self.tiledb_config)
        for k, v in (tiledb_config or {}).items():
            if v is None:
                config.pop(k, None)
            else:
                config[k] = v
        fields = dict(timestamp=self.timestamp, threadpool=self.threadpool, **changes)
        return SOMATileDBContext(tiledb_config=config, **fields)

    def storage_options(self):
        """The storage options (``object_store`` keys) this configuration
        gives tessera's storage."""
        if self._options is not None:
            return dict(self._options)
        return storage_options(self.tiledb_config)

    def __repr__(self):
        return f"SOMATileDBContext({self.tiledb_config!r})"


def of(context):
    """The storage options of ``context``: tessera.soma's context,
    tiledbsoma's (anything with a ``tiledb_config`` mapping), or none."""
    if context is None:
        return {}
    if isinstance(context, SOMATileDBContext):
        return context.storage_options()
    config = getattr(context, "tiledb_config", None)
    if config is None:
        raise SOMATypeError(f"context {context!r}: expected a SOMATileDBContext (with a tiledb_config)")
    return storage_options(config)


def options_for(uri, context):
    """The storage options for ``uri`` from ``context``: object stores
    take them, local paths none."""
    options = of(context)  # checks the context, for local paths too
    return options if is_object_store(uri) else {}


def with_options(options):
    """A context carrying storage options as they are (for the members an
    object makes in its own store)."""
    context = SOMATileDBContext()
    context._options = dict(options)
    return context


def is_object_store(uri):
    """Whether ``uri`` names an object store (a URI other than ``file://``)."""
    return "://" in uri and not uri.startswith("file://")
