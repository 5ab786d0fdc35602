"""``CurrentDomain`` and ``NDRectangle``: the part of an array's domain
in use (libtiledb 2.26's current domain), one range a dimension."""

import numpy as np

from .libtiledb import TileDBError


class NDRectangle:
    """One ``(lo, hi)`` range per dimension of ``domain``."""

    def __init__(self, ctx, domain):
        self._domain = domain
        self._ranges = {}

    def set_range(self, dim, start, end):
        d = self._domain.dim(dim)
        if d.isvar:
            self._ranges[d.name] = (start, end)
        else:
            self._ranges[d.name] = (d.dtype.type(start), d.dtype.type(end))

    def range(self, dim):
        d = self._domain.dim(dim)
        if d.name not in self._ranges:
            raise TileDBError(f"NDRectangle: no range set on dimension {d.name!r}")
        return self._ranges[d.name]

    def _bounds(self):
        out = []
        for d in self._domain:
            if d.name not in self._ranges:
                raise TileDBError(f"NDRectangle: no range set on dimension {d.name!r}")
            out.append(self._ranges[d.name])
        return out


class CurrentDomain:
    """The current domain of a schema: an :class:`NDRectangle`, or empty."""

    TYPE_NDRECTANGLE = "NDRECTANGLE"

    def __init__(self, ctx=None):
        self._rect = None

    @property
    def type(self):
        return self.TYPE_NDRECTANGLE

    @property
    def is_empty(self):
        return self._rect is None

    def set_ndrectangle(self, ndrect):
        self._rect = ndrect

    @property
    def ndrectangle(self):
        if self._rect is None:
            raise TileDBError("CurrentDomain is empty")
        return self._rect

    def to_json(self):
        out = []
        for d, (lo, hi) in zip(self._rect._domain, self._rect._bounds()):
            if d.isvar:
                out.append([lo.decode() if isinstance(lo, bytes) else lo, hi.decode() if isinstance(hi, bytes) else hi])
            else:
                out.append([np.asarray(lo).item(), np.asarray(hi).item()])
        return out

    @staticmethod
    def from_json(ranges, domain):
        rect = NDRectangle(None, domain)
        for d, (lo, hi) in zip(domain, ranges):
            rect.set_range(d.name, lo, hi)
        cd = CurrentDomain()
        cd.set_ndrectangle(rect)
        return cd
