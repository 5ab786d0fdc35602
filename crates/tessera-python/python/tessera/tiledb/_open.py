"""Opening arrays through tessera's native layer, with a context's
storage options, tessera's errors given as :class:`TileDBError`."""

import tessera
from tessera import _native
from tessera._array import _options

from .ctx import options_of
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
    """tessera's array at ``uri``, with the context's storage options."""
    if key is not None and isinstance(key, bytes):
        key = key.decode()
    return errors(_native.open_array, str(uri), timestamp, key, _options(options_of(ctx)))
