"""A field's values between numpy and Arrow, as TileDB-Py gives and
takes them: read columns as numpy arrays of the field's dtype (nulls as
masked arrays, text as objects), and written values (numpy, lists,
scalars, Arrow arrays, pandas series) as Arrow arrays of the field's
type."""

import numpy as np
import pyarrow as pa

from .libtiledb import TileDBError


def _stored_under_nulls(t):
    """Whether an Arrow column of type ``t`` keeps the stored values of its
    null cells in its buffers (one value buffer, or offsets and data)."""
    return (pa.types.is_primitive(t) and not pa.types.is_boolean(t)) or pa.types.is_string(t) or \
        pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t)


def arrow_text(table):
    """``table`` (a ``pyarrow.Table``) with its STRING_ASCII columns, read as
    binary (libtiledb keeps any byte there), as the strings TileDB-Py's
    Arrow results hold; a column holding bytes that are not UTF-8 stays
    binary, as Arrow text must be UTF-8."""
    for i, field in enumerate(table.schema):
        if not pa.types.is_binary(field.type) or (field.metadata or {}).get(b"tiledb.datatype") != b"STRING_ASCII":
            continue
        try:
            text = table.column(i).cast(pa.string())
        except pa.ArrowInvalid:
            continue
        table = table.set_column(i, field.with_type(pa.string()), text)
    return table


def _field_numpy(column, dtype, nullable=False):
    """An Arrow column as numpy with TileDB-Py's dtypes: fixed cells as
    ``dtype``, variable-length text and bytes as object arrays; a column
    with nulls as a masked array (an enumerated attribute's keys too, when
    it is ``nullable``: a dense cell left out is not a null)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if nullable and column.null_count and pa.types.is_dictionary(column.type):
        mask = column.is_null().to_numpy(zero_copy_only=False)
        return np.ma.MaskedArray(_field_numpy(column, dtype), mask=mask)
    if column.null_count and not pa.types.is_dictionary(column.type):
        mask = column.is_null().to_numpy(zero_copy_only=False)
        if _stored_under_nulls(column.type):
            # The values stored under the nulls (a dense cell left out: the
            # fill value), as libtiledb gives them.
            stored = pa.Array.from_buffers(column.type, len(column), [None] + column.buffers()[1:],
                                           offset=column.offset)
            return np.ma.MaskedArray(_field_numpy(stored, dtype), mask=mask)
        # Text and bytes columns were given whole above.
        if dtype.kind in "SU":
            filled = column.fill_null(b"")
        elif dtype.kind in "iufb":
            filled = column.fill_null(pa.scalar(0 if dtype.kind != "b" else False, type=column.type))
        else:
            filled = column
        return np.ma.MaskedArray(_field_numpy(filled, dtype), mask=mask)
    if pa.types.is_dictionary(column.type):
        # The keys as stored: a dense cell left out holds the fill value.
        keys = column.indices
        column = pa.Array.from_buffers(keys.type, len(keys), [None, keys.buffers()[1]], offset=keys.offset)
    if dtype.kind in "SU":
        values = column.to_pylist()
        if dtype.kind == "S":
            values = [v.encode() if isinstance(v, str) else v for v in values]
        if dtype.itemsize:
            return np.array(values, dtype=dtype)
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if pa.types.is_fixed_size_list(column.type) or pa.types.is_list(column.type) or \
            pa.types.is_large_list(column.type):
        if dtype.kind in "Vc" or pa.types.is_fixed_size_list(column.type):
            flat = column.flatten().to_numpy(zero_copy_only=False)
            base = dtype if dtype.kind not in "Vc" else (
                np.dtype("float32" if dtype.itemsize == 8 else "float64") if dtype.kind == "c" else
                dtype.fields[dtype.names[0]][0])
            flat = flat.astype(base, copy=False)
            if dtype.kind in "Vc":
                return np.ascontiguousarray(flat).view(dtype)
            return flat.reshape(len(column), -1)
        out = np.empty(len(column), dtype=object)
        out[:] = [np.array(v, dtype=dtype) for v in column.to_pylist()]
        return out
    if pa.types.is_timestamp(column.type) or pa.types.is_duration(column.type) or pa.types.is_date(column.type):
        if dtype.kind in "mM":
            return column.cast(pa.int64()).to_numpy(zero_copy_only=False).view(dtype)
        return column.to_numpy(zero_copy_only=False)
    values = column.to_numpy(zero_copy_only=False)
    if dtype.kind in "mM":
        return values.astype(np.int64).view(dtype)
    return values.astype(dtype, copy=False) if dtype.kind != "O" else values


def _checked_values(value, attr, shape=None):
    """:func:`_arrow_values`, a value that does not fit ``attr``'s type a
    ValueError naming the attribute, as TileDB-Py's."""
    try:
        if attr.dtype.kind == "S" and not attr.isvar and np.asarray(value).dtype.kind in "iufc":
            raise TypeError(f"Cannot write a string value to non-string typed attribute '{attr.name}'!")
        return _arrow_values(value, attr, shape)
    except (TypeError, ValueError, pa.ArrowException) as e:
        raise ValueError(f"Failed to convert buffer for attribute: '{attr.name}': {e}") from e


def _arrow_values(value, attr, shape=None):
    """Values for ``attr`` (numpy, lists, scalars, Arrow arrays, pandas
    series) as an Arrow array in C order; a scalar fills ``shape``."""
    dtype = attr.dtype
    if isinstance(value, (pa.Array, pa.ChunkedArray)) or type(value).__module__.startswith("pandas"):
        # Nulls kept: cast to the type numpy values would take.
        arrow = value if isinstance(value, (pa.Array, pa.ChunkedArray)) else pa.array(value, from_pandas=True)
        target = _arrow_values(np.array([], dtype=dtype if not attr.isvar else object), attr).type
        if pa.types.is_null(arrow.type) or arrow.type != target:
            arrow = arrow.cast(target)
        return arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow
    if isinstance(value, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(value).ravel(order="C")
        data = _arrow_values(np.ma.getdata(value), attr, shape)
        return pa.array(data.to_pylist(), type=data.type, mask=mask) if mask.any() else data
    if np.isscalar(value) and shape is not None:
        value = np.full(shape, value, dtype=dtype if dtype.kind not in "SU" else object)
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if attr.isvar or dtype.kind in "SU":
        flat = arr.ravel(order="C") if arr.dtype != object or arr.ndim > 1 else arr
        items = list(flat)
        if dtype.kind == "U":
            return pa.array([None if v is None else (v.decode() if isinstance(v, bytes) else str(v)) for v in items],
                            type=pa.large_string())
        if dtype.kind == "S":
            kind = pa.large_string() if attr.isascii else pa.large_binary()
            if attr.isascii and any(isinstance(v, str) and not v.isascii() for v in items):
                raise TileDBError(f"attribute {attr.name!r} holds ASCII text: a value is not ASCII")
            data = [None if v is None else (v if isinstance(v, bytes) else str(v).encode()) for v in items]
            return pa.array([d.decode() if isinstance(d, bytes) and kind == pa.large_string() else d for d in data],
                            type=kind)
        return pa.array([np.atleast_1d(np.asarray(v, dtype=dtype)) for v in items],
                        type=pa.large_list(pa.from_numpy_dtype(dtype)))
    if dtype.kind in "Vc":
        base = np.dtype("float32" if dtype == np.complex64 else "float64") if dtype.kind == "c" else \
            dtype.fields[dtype.names[0]][0]
        n = attr.ncells
        flat = np.ascontiguousarray(arr, dtype=dtype).ravel().view(base)
        return pa.FixedSizeListArray.from_arrays(pa.array(flat), n)
    flat = np.ascontiguousarray(arr, dtype=dtype).ravel(order="C")
    if dtype.kind in "mM":
        return pa.array(flat.astype(np.int64))
    return pa.array(flat)
