"""libtiledb's configuration keys for object stores (``vfs.s3.*``,
``vfs.azure.*``, ``vfs.gcs.*``) as the storage options tessera's object
stores take (the ``object_store`` crate's keys): what ``tessera.soma``'s
and ``tessera.tiledb``'s contexts give their reads and writes.

    >>> storage_options({"vfs.s3.region": "eu-west-1", "sm.tile_cache_size": 0})
    {'aws_region': 'eu-west-1'}
    >>> storage_options({"vfs.s3.connect_max_tries": 3})
    {'max_retries': '3'}
"""

import json

from ._convert import option_text

# libtiledb's storage keys and the object_store keys tessera's storage
# takes for them. Other keys (libtiledb's tuning: sm.*, vfs.*.max_*, ...)
# are not storage keys.
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
    # How hard a request is retried (tessera's own keys, every store).
    "vfs.s3.connect_max_tries": "max_retries",
    "vfs.azure.max_retries": "max_retries",
}


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
    key = text.get("vfs.gcs.service_account_key")
    try:
        account = json.loads(key) if key else {}
    except ValueError:
        account = {}
    return text.get("vfs.gcs.endpoint") or (account.get("gcs_base_url") if isinstance(account, dict) else "") or ""
