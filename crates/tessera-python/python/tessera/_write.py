"""Writes: ``tessera.create(uri, schema)`` and ``tessera.write(uri, data)``."""

import json
import sys

import pyarrow as pa

from . import _native
from ._convert import from_numbers, storage_pairs
from ._schema import Schema


def create(uri, schema, key=None, storage_options=None):
    """Creates an empty array at ``uri`` from ``schema`` (a :class:`Schema`,
    its JSON form as a dict, or JSON text), encrypted with ``key`` if given;
    ``storage_options`` as :func:`tessera.open`'s."""
    if isinstance(schema, Schema):
        schema = schema.to_json()
    if not isinstance(schema, str):
        schema = json.dumps(schema)
    _native.create(str(uri), schema, key, storage_pairs(storage_options))


def write(uri, data, timestamp=None, key=None, budget=None, subarray=None, storage_options=None,
          duplicates="refuse"):
    """Writes ``data`` as one new fragment of the array at ``uri`` (sparse:
    cells in any order; dense: cells covering a box exactly once); returns
    the fragment names. ``data``: a ``pyarrow.Table``, ``RecordBatch`` or
    ``RecordBatchReader``, a pandas DataFrame, a dict of columns, or any
    object with ``__arrow_c_stream__``; columns named as the array's
    dimensions and attributes. Nothing is visible until the commit file,
    written last, exists.

    A dense write may give its box instead of coordinates, as TileDB-Py's
    ``A[lo:hi, ...] = data`` does: ``subarray`` maps each dimension to its
    inclusive ``(first, last)`` coordinate (or lists them in the schema's
    order), and ``data`` holds the attributes only, the box's cells in
    row-major order (numpy arrays of any shape are taken in C order)::

        tessera.write(uri, {"a": np.zeros((4, 10))}, subarray={"r": (2, 5), "c": (0, 9)})

    ``storage_options`` configure an object store as :func:`tessera.open`'s.
    Cells given twice at one coordinate of a sparse array that does not
    allow duplicates refuse the write (``duplicates="refuse"``), or are
    all written (``"keep"``: a read gives any of them), or one of them is,
    the first given (``"drop"``).
    """
    bounds = None if subarray is None else _box(uri, subarray, key, storage_options)
    if isinstance(data, dict):
        data = {k: _column(v, bounds is not None) for k, v in data.items()}
    options = storage_pairs(storage_options)
    return _native.write(str(uri), _stream(data), timestamp, key, budget, bounds, options, duplicates)


def _box(uri, subarray, key, storage_options):
    """The box as ``[(first, last), ...]`` in the schema's dimension order."""
    if not isinstance(subarray, dict):
        return [(int(lo), int(hi)) for lo, hi in subarray]
    native = _native.open_array(str(uri), None, key, storage_pairs(storage_options))
    dims = [d.name for d in Schema.from_json(native.schema_json()).dims]
    unknown = set(subarray) - set(dims)
    if unknown:
        raise ValueError(f"subarray names {sorted(unknown)}, not dimensions of the array ({dims})")
    missing = [d for d in dims if d not in subarray]
    if missing:
        raise ValueError(f"subarray lacks dimensions {missing}: a box gives every dimension")
    return [(int(subarray[d][0]), int(subarray[d][1])) for d in dims]


def _column(values, box):
    """A column of a dict: numbers in numpy arrays handed to Arrow as they
    lie in memory (no copy, and none of the pandas import pyarrow's own
    numpy conversion makes); for a box, numpy arrays of any shape in C
    order."""
    np = sys.modules.get("numpy")  # numpy is optional: not imported, not numpy
    if np is None or not isinstance(values, np.ndarray):
        return values
    if box and values.ndim != 1:
        values = np.ravel(values, order="C")
    if values.ndim == 1 and values.dtype.kind in "iuf" and values.dtype.isnative and values.flags.c_contiguous:
        return from_numbers(values)
    return values


def _stream(data):
    # pandas is optional: when it is not imported, data is no DataFrame.
    pd = sys.modules.get("pandas")
    # Before the stream protocol: pandas' own export carries the index.
    if pd is not None and isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, dict):
        return pa.table(data)
    if hasattr(data, "__arrow_c_stream__"):
        return data
    raise TypeError(f"cannot write {type(data).__name__}: expected pyarrow data, a DataFrame or a dict of columns")
