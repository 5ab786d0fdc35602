"""tessera.soma's errors. Each is a :class:`tessera.TesseraError`, and
where tiledbsoma raises a ``ValueError``, ``KeyError``, ``TypeError`` or
``NotImplementedError`` for the same problem, that too: a script's
``except`` clauses written for tiledbsoma catch them, and so does
``except tessera.TesseraError``."""

import tessera


class SOMAError(tessera.TesseraError):
    """Something in the experiment is not what SOMA says it should be."""


class SOMAValueError(SOMAError, ValueError):
    """A bad argument: coordinates, a value filter, a column, a layer."""


class SOMAKeyError(SOMAError, KeyError):
    """No member, measurement or layer of that name."""


class SOMATypeError(SOMAError, TypeError):
    """An argument of the wrong kind."""


class SOMANotImplementedError(SOMAError, NotImplementedError):
    """A read tessera.soma does not make."""


class DoesNotExistError(SOMAError):
    """No SOMA object at that URI."""


class AlreadyExistsError(SOMAError):
    """An object already exists where one was to be created."""
