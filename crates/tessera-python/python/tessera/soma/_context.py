"""``SOMATileDBContext``: where and how to reach an object store, given as
tiledbsoma's context gives it (libtiledb's configuration keys)."""

from tessera._array import option_text

from ._errors import SOMATypeError


# libtiledb's storage keys and the object_store keys tessera's storage
# takes for them. Other keys (libtiledb's tuning: sm.*, vfs.*.max_*, ...)
# are kept in the context and do not apply to tessera's reads.
_KEYS = {
    "vfs.s3.region": "aws_region",
    "vfs.s3.aws_access_key_id": "aws_access_key_id",
    "vfs.s3.aws_secret_access_key": "aws_secret_access_key",
    "vfs.s3.aws_session_token": "aws_session_token",
    "vfs.s3.aws_role_arn": "aws_role_arn",
    "vfs.s3.aws_session_name": "aws_role_session_name",
    "vfs.s3.use_virtual_addressing": "aws_virtual_hosted_style_request",
    "vfs.s3.no_sign_request": "aws_skip_signature",
    "vfs.azure.storage_account_name": "azure_storage_account_name",
    "vfs.azure.storage_account_key": "azure_storage_account_key",
    "vfs.azure.storage_sas_token": "azure_storage_sas_key",
    "vfs.gcs.service_account_key": "google_service_account_key",
    "vfs.gcs.endpoint": "google_base_url",
}


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


def storage_options(config):
    """libtiledb's storage keys of ``config`` as tessera's storage options."""
    text = {k: option_text(v) for k, v in config.items()}
    out = {_KEYS[k]: v for k, v in text.items() if k in _KEYS}
    s3 = text.get("vfs.s3.endpoint_override")
    if s3:
        scheme = text.get("vfs.s3.scheme", "https")
        out["aws_endpoint"] = s3 if "://" in s3 else f"{scheme}://{s3}"
        out["aws_allow_http"] = option_text(out["aws_endpoint"].startswith("http://"))
    azure = text.get("vfs.azure.blob_endpoint")
    if azure:
        out["azure_endpoint"] = azure
        out["azure_allow_http"] = option_text(azure.startswith("http://"))
    if _gcs_endpoint(text).startswith("http://"):
        # An emulator or a proxy (libtiledb takes plain HTTP endpoints as given).
        out["allow_http"] = "true"
    return out


def _gcs_endpoint(text):
    """The GCS endpoint the keys name: ``vfs.gcs.endpoint``, or the
    ``gcs_base_url`` of the service account key ("" for neither)."""
    import json

    key = text.get("vfs.gcs.service_account_key")
    try:
        account = json.loads(key) if key else {}
    except ValueError:
        account = {}
    return text.get("vfs.gcs.endpoint") or (account.get("gcs_base_url") if isinstance(account, dict) else "") or ""


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


def is_missing(error):
    """Whether a tessera error says there is nothing at the URI."""
    text = str(error).lower()
    return any(s in text for s in ("no such file", "not found", "does not exist", "no array schema",
                                   "not a tiledb group", "not a tiledb array", "notfound"))


def is_object_store(uri):
    """Whether ``uri`` names an object store (a URI other than ``file://``)."""
    return "://" in uri and not uri.startswith("file://")
