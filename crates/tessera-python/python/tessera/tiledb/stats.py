"""Statistics as TileDB-Py reports them (``stats_enable``,
``stats_dump``, ``Ctx.get_stats``, ``Query.get_stats``): here, what
tessera.tiledb itself measures while statistics are on: reads and the
cells they gave (counters), time spent reading, converting buffers and
making pandas frames (timers, TileDB-Py's ``py.*`` names for the Python
side). libtiledb's internal counters (its reader loops, tile caches) have
no counterpart in tessera and are not made up.

Like TileDB-Py's, the statistics are the process's: enabled, reset and
dumped for every array at once. They are kept under a lock, so threads
reading concurrently add up correctly.

    >>> import tessera.tiledb as tiledb
    >>> tiledb.stats_enable(); tiledb.stats_reset()
    >>> with timer("py.getitem_time"):
    ...     pass
    >>> "py.getitem_time" in tiledb.stats_dump(print_out=False, json=True)
    True
    >>> tiledb.stats_disable()
"""

import contextlib
import json as json_module
import threading
import time

from .libtiledb import TileDBError


class _Stats:
    """Counters and timers (seconds), and whether they are being kept."""

    def __init__(self):
        self.lock = threading.Lock()
        self.enabled = False
        self.counters = {}
        self.timers = {}

    def add(self, table, name, amount):
        with self.lock:
            table[name] = table.get(name, 0) + amount


_STATS = _Stats()


def stats_enable():
    """Starts keeping statistics."""
    _STATS.enabled = True


def stats_disable():
    """Stops keeping statistics (those kept stay until reset)."""
    _STATS.enabled = False


def stats_reset():
    """Forgets the statistics kept so far."""
    with _STATS.lock:
        _STATS.counters.clear()
        _STATS.timers.clear()


def count(name, amount=1):
    """Adds ``amount`` to counter ``name`` while statistics are on."""
    if _STATS.enabled:
        _STATS.add(_STATS.counters, name, amount)


@contextlib.contextmanager
def timer(name, into=None):
    """Times the block into timer ``name`` while statistics are on (and
    into the dict ``into``, a query's own, when given)."""
    if not _STATS.enabled:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        _STATS.add(_STATS.timers, name, elapsed)
        if into is not None:
            into[name] = into.get(name, 0.0) + elapsed


def snapshot():
    """``(counters, timers)``: copies of what is kept."""
    with _STATS.lock:
        return dict(_STATS.counters), dict(_STATS.timers)


def render(counters, timers, as_json, include_python=True):
    """Statistics as TileDB-Py's dumps give them: JSON with ``counters``,
    ``timers`` and ``python``, or text a line each."""
    python = {k: v for k, v in timers.items() if k.startswith("py.")}
    tessera = {k: v for k, v in timers.items() if not k.startswith("py.")}
    if as_json:
        doc = {"counters": counters, "timers": tessera}
        if include_python:
            doc["python"] = python
        return json_module.dumps(doc, indent=2, sort_keys=True)
    lines = ["tessera.tiledb statistics:"]
    lines += [f"  {k}: {v}" for k, v in sorted(counters.items())]
    lines += [f"  {k}: {v:.6f} s" for k, v in sorted(tessera.items())]
    if include_python:
        lines += [f"  {k} : {v:.6f}" for k, v in sorted(python.items())]
    return "\n".join(lines) + "\n"


def stats_dump(version=True, print_out=True, include_python=True, json=False, verbose=True):
    """The statistics kept, as text (or JSON); printed unless
    ``print_out`` is false, else returned."""
    if not _STATS.enabled:
        raise TileDBError("Statistics are not enabled. Call tiledb.stats_enable() first.")
    counters, timers = snapshot()
    text = render(counters, timers, json, include_python)
    if print_out:
        print(text)
        return None
    return text


def python_internal_stats(print_out=False):
    """The Python-side timers (``py.*``), a line each."""
    _, timers = snapshot()
    text = "".join(f"{k} : {v:.6f}\n" for k, v in sorted(timers.items()) if k.startswith("py."))
    if print_out:
        print(text)
        return None
    return text
