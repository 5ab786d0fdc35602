"""Opening arrays through tessera's native layer, with a context's
storage options, tessera's errors given as :class:`TileDBError`."""

import shutil

import tessera
from tessera import _native

from .ctx import encryption_key, local_path, storage
from .libtiledb import TileDBError


def errors(call, *args, **kwargs):
    """``call(...)``, tessera's errors raised as :class:`TileDBError`."""
    try:
        return call(*args, **kwargs)
    except TileDBError:
        raise
    except tessera.TesseraError as e:
        raise TileDBError(str(e)) from None


def open_native(uri, ctx=None, key=None, timestamp=None):
    """tessera's array at ``uri``, with the context's storage options (and
    its ``sm.encryption_key`` where no key is given)."""
    if key is not None and isinstance(key, bytes):
        key = key.decode()
    if key is None:
        key = encryption_key(ctx)
    return errors(_native.open_array, str(uri), timestamp, key, storage(uri, ctx))


def object_type(uri, ctx=None):
    """``"array"``, ``"group"`` or ``None`` for what is at ``uri``."""
    uri = str(uri)
    # One listing (a file is a folder with nothing in it); a store that
    # does not answer raises rather than passing for "nothing there".
    return errors(_native.object_type, local_path(uri) or uri, storage(uri, ctx))


def remove(uri, ctx=None):
    """Removes the array or group at ``uri``."""
    if object_type(uri, ctx) is None:
        raise TileDBError(f"remove: no array or group at {uri}")
    path = local_path(uri)
    if path is None:
        raise TileDBError("remove: only local arrays and groups are removed")
    shutil.rmtree(path)
