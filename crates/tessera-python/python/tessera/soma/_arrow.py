"""Arrow results in tiledbsoma's types: strings and binaries as their
large forms (dictionary values too), without tessera's field metadata."""

import numpy as np
import pyarrow as pa


def soma_type(t):
    if pa.types.is_string(t):
        return pa.large_string()
    if pa.types.is_binary(t):
        return pa.large_binary()
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, soma_type(t.value_type), t.ordered)
    return t


def soma_schema(schema):
    return pa.schema([pa.field(f.name, soma_type(f.type), f.nullable) for f in schema])


def soma_table(table):
    """``table`` (or a record batch) with tiledbsoma's types."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    target = soma_schema(table.schema)
    columns = [c if c.type == f.type else pa.chunked_array([retyped(a, f.type) for a in c.chunks], type=f.type)
               for c, f in zip(table.columns, target)]
    return pa.Table.from_arrays(columns, schema=target)


def retyped(array, to):
    """``array`` as type ``to``: strings and binaries (dictionary values
    too) widened to their large forms over the same bytes, with only the
    offsets rewritten (a cast would copy the bytes, and load
    pyarrow.compute into the process)."""
    if array.type == to:
        return array
    if pa.types.is_dictionary(to) and pa.types.is_dictionary(array.type):
        return pa.DictionaryArray.from_arrays(array.indices, retyped(array.dictionary, to.value_type),
                                              ordered=to.ordered)
    small = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    if small.get(to) != array.type:
        return array.cast(to)
    validity, offsets, data = array.buffers()
    if offsets is None:
        return pa.array([], type=to)
    count = array.offset + len(array) + 1
    wide = np.frombuffer(offsets, dtype=np.int32, count=count).astype(np.int64)
    return pa.Array.from_buffers(to, len(array), [validity, pa.py_buffer(wide), data], array.null_count,
                                 array.offset)


class TableReadIter:
    """The tables of a read, one per batch (``for t in it``), or all of
    them as one (``concat()``)."""

    def __init__(self, batches, whole):
        self._batches = batches
        self._whole = whole

    def __iter__(self):
        return iter(self._batches())

    def __next__(self):
        if not hasattr(self, "_it"):
            self._it = iter(self)
        return next(self._it)

    def concat(self):
        """The whole read as one ``pyarrow.Table``."""
        return self._whole()
