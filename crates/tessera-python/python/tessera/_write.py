"""Writes: ``tessera.create(uri, schema)`` and ``tessera.write(uri, data)``."""

import json

import pyarrow as pa

from . import _native
from ._schema import Schema


def create(uri, schema, key=None):
    """Creates an empty array at ``uri`` from ``schema`` (a :class:`Schema`,
    its JSON form as a dict, or JSON text), encrypted with ``key`` if given."""
    if isinstance(schema, Schema):
        schema = schema.to_json()
    if not isinstance(schema, str):
        schema = json.dumps(schema)
    _native.create(str(uri), schema, key)


def write(uri, data, timestamp=None, key=None, budget=None):
    """Writes ``data`` as one new fragment of the array at ``uri`` (sparse:
    cells in any order; dense: cells covering a box exactly once); returns
    the fragment names. ``data``: a ``pyarrow.Table``, ``RecordBatch`` or
    ``RecordBatchReader``, a pandas DataFrame, a dict of columns, or any
    object with ``__arrow_c_stream__``; columns named as the array's
    dimensions and attributes. Nothing is visible until the commit file,
    written last, exists."""
    return _native.write(str(uri), _stream(data), timestamp, key, budget)


def _stream(data):
    try:
        import pandas as pd
    except ImportError:  # pandas is optional
        pd = None
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
