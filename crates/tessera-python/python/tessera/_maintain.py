"""Keeping a group tree healthy: ``tessera.consolidate_tree`` and
``tessera.vacuum_tree`` run libtiledb's consolidations or vacuums on every
array below a group (a SOMA experiment, say)."""

from dataclasses import dataclass

from . import _native
from ._convert import storage_pairs

MODES = ("fragments", "commits", "fragment_meta", "array_meta")


@dataclass(frozen=True)
class ArrayMaintained:
    """What was done to one array of the tree."""

    #: The array's path in the tree (member names joined with ``/``).
    member: str
    #: Its URI.
    uri: str
    #: ``(mode, what it did)`` per mode run.
    steps: tuple
    #: Why its steps stopped, or None.
    error: object
    #: Seconds it took.
    seconds: float


def _run(work, uri, modes, jobs, memory_budget, key, storage_options, progress):
    callback = None
    if progress is not None:
        def callback(index, total, outcome):
            progress(index, total, ArrayMaintained(*outcome[:2], tuple(outcome[2]), *outcome[3:]))
    done = _native.maintain_tree(str(uri), work, None if modes is None else list(modes), jobs, memory_budget, key,
                                 storage_pairs(storage_options), callback)
    return [ArrayMaintained(m, u, tuple(s), e, t) for m, u, s, e, t in done]


def consolidate_tree(uri, modes=None, jobs=2, memory_budget=1 << 30, key=None, storage_options=None,
                     progress=None):
    """Consolidates every array below the group at ``uri`` (or the array at
    ``uri``) in ``modes`` (default all of :data:`MODES`, in libtiledb's
    order), ``jobs`` arrays side by side within ``memory_budget`` bytes.
    ``progress(index, total, ArrayMaintained)`` is called as each array
    ends. A step with nothing to do is passed over, so running it again
    after an interruption finishes the work. Returns a list of
    :class:`ArrayMaintained`; an array that failed has ``error`` set and
    the others are done.

        >>> done = tessera.consolidate_tree("s3://bucket/experiment")
        >>> tessera.vacuum_tree("s3://bucket/experiment")
    """
    return _run("consolidate", uri, modes, jobs, memory_budget, key, storage_options, progress)


def vacuum_tree(uri, modes=None, jobs=2, memory_budget=1 << 30, key=None, storage_options=None, progress=None):
    """Vacuums every array below the group at ``uri``, as
    :func:`consolidate_tree` consolidates them: what consolidation
    replaced is removed."""
    return _run("vacuum", uri, modes, jobs, memory_budget, key, storage_options, progress)
