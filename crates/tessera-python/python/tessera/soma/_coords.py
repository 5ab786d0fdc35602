"""SOMA coordinates as tessera subarrays.

A read's ``coords`` hold one entry per dimension, in order, and may stop
early (the rest are whole): ``None`` or ``slice(None)`` for everything, an
integer for one coordinate, ``slice(lo, hi)`` for an inclusive range (an
open end runs to the domain's), or a sequence of integers (list, numpy or
pyarrow array) for those coordinates.
"""

import numpy as np
import pyarrow as pa

from tessera._convert import numbers

from ._errors import SOMAValueError

# Bytes a streamed read holds at once (a batch's decoded tiles and cells).
BATCH_BYTES = 256 << 20


def subarray(coords, dims, current):
    """``coords`` as ``{dimension: [(lo, hi), ...]}``, or ``None`` when a
    dimension selects nothing (an empty list of coordinates). Slices are
    cut to the domain in force (``current``, per dimension ``(lo, hi)``);
    a coordinate outside it, or a slice wholly outside, is an error."""
    if coords is None:
        coords = ()
    if isinstance(coords, (int, np.integer, slice)):
        coords = (coords,)
    coords = tuple(coords)
    if len(coords) > len(dims):
        raise SOMAValueError(f"coords has {len(coords)} entries for {len(dims)} dimensions")
    out = {}
    for c, d, (lo, hi) in zip(coords, dims, current):
        ranges = _ranges(c, d)
        if ranges is None:
            continue
        if isinstance(c, slice):
            (a, b), = ranges
            if b < lo or a > hi:
                raise SOMAValueError(f"coords on {d.name}: slice [{a}:{b}] does not overlap the domain [{lo}:{hi}]")
            ranges = [(max(a, lo), min(b, hi))]
        else:
            outside = [r for r in ranges if r[0] < lo or r[1] > hi]
            if outside:
                raise SOMAValueError(f"coords on {d.name}: {outside[0][0]} is outside the domain [{lo}:{hi}]")
        if not ranges:
            return None
        out[d.name] = ranges
    return out


def _ranges(c, dim):
    if c is None:
        return None
    if isinstance(c, slice):
        if c.step not in (None, 1):
            raise SOMAValueError(f"coords on {dim.name}: slices take no step")
        if c.start is None and c.stop is None:
            return None
        lo, hi = dim.domain
        start = lo if c.start is None else _scalar(c.start)
        stop = hi if c.stop is None else _scalar(c.stop)
        if start > stop:
            raise SOMAValueError(f"coords on {dim.name}: slice start {start} is after its stop {stop}")
        return [(start, stop)]
    if isinstance(c, (int, np.integer, float, np.floating, str, bytes)):
        v = _scalar(c)
        return [(v, v)]
    points = _points(c)
    return _runs(points) if points.dtype.kind in "iu" else [(v, v) for v in points.tolist()]


def _points(c):
    """A sequence of coordinates as a numpy array."""
    if isinstance(c, (pa.Array, pa.ChunkedArray)):
        return numbers(c)
    return np.asarray(c)


def _runs(points):
    """Integer points as ranges of consecutive values (fewer ranges to read)."""
    if len(points) == 0:
        return []
    p = np.unique(points.astype(np.int64))
    breaks = np.flatnonzero(np.diff(p) != 1)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(p) - 1]))
    return list(zip(p[starts].tolist(), p[ends].tolist()))


def _scalar(v):
    return v.item() if isinstance(v, np.generic) else v
