"""Values as the native side takes them and gives them back: storage
options as text pairs, Arrow columns of numbers as numpy arrays and numpy
arrays as Arrow arrays over the same memory (pyarrow's own conversions
import pandas the first time, 0.2-0.5 s a process pays)."""

import numpy as np
import pyarrow as pa


def storage_pairs(storage_options):
    """Storage options as the native side takes them: ``(key, text)`` pairs."""
    return [(str(k), option_text(v)) for k, v in (storage_options or {}).items()]


def option_text(value):
    """An option's value as text: booleans as ``true`` and ``false``."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def numbers(column):
    """A column (an Array or ChunkedArray) as numpy: numbers without nulls
    read off the Arrow buffers (see ``plain_numbers``), others through
    pyarrow's conversion."""
    plain = plain_numbers(column)
    if plain is not None:
        return plain
    return column.to_numpy(zero_copy_only=False)


def from_numbers(values):
    """A 1-D numpy array of numbers as an Arrow array over the same memory
    (``pa.array`` would import pandas the first time)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def plain_numbers(column):
    """Numbers with no nulls, an Array or ChunkedArray, as numpy read off
    the Arrow buffers (one chunk: viewed without a copy, read-only, as
    pyarrow's zero-copy ``to_numpy``; several: joined), or None.
    pyarrow's own conversion imports pandas the first time, 0.2-0.5 s a
    process pays on its first read."""
    t = column.type
    if column.null_count:
        return None
    if pa.types.is_signed_integer(t):
        kind = "i"
    elif pa.types.is_unsigned_integer(t):
        kind = "u"
    elif pa.types.is_floating(t):
        kind = "f"
    else:
        return None
    dtype = np.dtype(f"<{kind}{t.bit_width // 8}")
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    views = [np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * dtype.itemsize)
             for c in chunks if len(c)]
    if len(views) == 1:
        return views[0]
    return np.concatenate(views) if views else np.empty(0, dtype=dtype)
