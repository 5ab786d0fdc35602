"""pandas data frames (AnnData's obs, var and those in uns) as the Arrow
tables tiledbsoma.io writes for them: the index demoted to a column, a
``soma_joinid`` added, every column nullable, categoricals as
dictionaries with room to grow."""

import numpy as np
import pandas as pd
import pyarrow as pa

# Categoricals of more values than this are written as plain values, as
# tiledbsoma does (their keys would outgrow int16).
DECATEGORIZE_ABOVE = 32767


def storable(df):
    """``df`` with the columns TileDB cannot hold made storable: float16 as
    float32, categoricals of very many values as their values."""
    columns = {}
    for name, column in df.items():
        if isinstance(column.dtype, pd.CategoricalDtype):
            if len(column.cat.categories) > DECATEGORIZE_ABOVE:
                column = column.astype(column.cat.categories.dtype)
        elif column.dtype == np.float16:
            column = column.astype(np.float32)
        columns[str(name)] = column
    out = pd.DataFrame(columns, index=df.index)
    out.index.name = df.index.name
    return out


def demote_index(df, id_column_name):
    """Moves ``df``'s index into a column, in place, as tiledbsoma does;
    returns the index's own name (``None`` for an unnamed or ``"index"``
    index), which tiledbsoma keeps to restore it on the way out."""
    named = df.index.name is not None and df.index.name != "index"
    original = str(df.index.name) if named else None
    df.reset_index(inplace=True)
    if id_column_name is not None:
        if id_column_name in df:
            if "index" in df:
                df.drop(columns=["index"], inplace=True)
        else:
            df.rename(columns={"index": id_column_name}, inplace=True)
    return original


def arrow_table(df):
    """``df`` (indexed by ``soma_joinid``) as an Arrow table with every
    column marked nullable (the schema's metadata says so) and dictionary
    keys of at least 32 bits, as tiledbsoma.io writes it."""
    nullable = [str(k) for k in df.columns]
    for key in df.columns:
        column = df[key]
        if column.isna().all():
            if column.dtype.name == "object":
                df[key] = pd.Series([None] * len(df), dtype=pd.StringDtype(), index=df.index)
            elif column.dtype.name == "category":
                df[key] = pd.Series(["X"] * len(df), dtype=pd.CategoricalDtype(),
                                    index=df.index).cat.remove_categories(["X"])
        if isinstance(df[key].dtype, pd.CategoricalDtype):
            values = df[key].values
            df[key] = pd.Categorical(values=df[key], categories=values.categories, ordered=bool(values.ordered))
    table = pa.Table.from_pandas(df)
    fields = []
    for field in table.schema:
        if field.name == "__index_level_0__":
            continue
        t = field.type
        if pa.types.is_dictionary(t):
            index = pa.int32() if t.index_type in (pa.int8(), pa.int16()) else t.index_type
            value = pa.large_string() if t.value_type == pa.null() else t.value_type
            t = pa.dictionary(index, value, t.ordered)
        fields.append(pa.field(field.name, t))
    metadata = dict(table.schema.metadata or {})
    metadata.update({k.encode(): b"nullable" for k in nullable})
    return pa.Table.from_pandas(df, schema=pa.schema(fields, metadata=metadata))
