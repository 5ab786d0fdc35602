"""Every query of every fixture (five libtiledb releases), read by tessera
into a pyarrow.Table, equals TileDB-Py 0.36.1's live read of the same
array: values, nulls, order where the layout fixes one, and types."""

import json

import pyarrow as pa
import pytest
import tiledb

import read as tiledb_read  # xtask/fixtures/read.py: TileDB-Py's side, as the fixtures were recorded
import tessera
from conftest import canonical, cases, contract_rows

QUERIES = [
    pytest.param(folder, case, i, id=f"{release}/{name}/{q.get('name', i)}")
    for release, name, folder, case in cases()
    for i, q in enumerate(case["queries"])
]


def tessera_read(folder, case, qd):
    ts = qd.get("timestamp")
    A = tessera.open(folder / "array", timestamp=tuple(ts) if isinstance(ts, list) else ts, key=case.get("key"))
    sparse = A.schema.sparse
    layout = qd.get("layout", "unordered" if sparse else "row-major")
    table = A.read(attrs=qd.get("attrs"), subarray=qd.get("subarray"), where=qd.get("cond"), layout=layout)
    return A, table, layout


def tiledb_py_read(folder, case, qd):
    ts = qd.get("timestamp")
    with tiledb.open(str(folder / "array"), timestamp=tuple(ts) if isinstance(ts, list) else ts,
                     ctx=tiledb_read.ctx_for(case)) as A:
        rows, layout = tiledb_read.run_query(A, qd)
    return rows


@pytest.mark.parametrize("folder,case,i", QUERIES)
def test_query_equals_tiledb_py(folder, case, i):
    qd = case["queries"][i]
    if "libtiledb_inconsistent" in qd:
        # libtiledb contradicts its own whole-array read here (testdata/README.md):
        # tessera's answer must at least agree with tessera's whole-array read.
        A, table, _ = tessera_read(folder, case, qd)
        whole = contract_rows(A.read())
        inside = [r for r in whole if all(any(lo <= r[d] <= hi for lo, hi in rs) for d, rs in qd["subarray"].items())]
        assert canonical(contract_rows(table)) == canonical(inside)
        return
    try:
        expected = tiledb_py_read(folder, case, qd)
    except tiledb.TileDBError:
        # TileDB-Py 0.36.1 cannot run it: the rows the fixture recorded
        # (the newest reader's, as xtask/fixtures/generate.py keeps them).
        with open(folder / "expected.json") as fh:
            expected = json.load(fh)["queries"][i]["rows"]
    A, table, layout = tessera_read(folder, case, qd)
    got = contract_rows(table)
    if layout == "unordered":
        assert canonical(got) == canonical(expected)
    elif A.schema.sparse and A.schema.allows_duplicates:
        # Cells sharing coordinates have no order among themselves.
        dims = [d.name for d in A.schema.dims]
        assert [[r[d] for d in dims] for r in got] == [[r[d] for d in dims] for r in expected]
        assert canonical(got) == canonical(expected)
    else:
        assert got == expected
    check_types(A, table, qd)


def check_types(A, table, qd):
    """Each column's Arrow type fits the TileDB datatype TileDB-Py reads."""
    schema = A.schema
    for field in table.schema:
        tiledb_type = field.metadata[b"tiledb.datatype"].decode()
        is_dim = field.metadata.get(b"tiledb.dimension") == b"true"
        if not is_dim:
            a = schema.attr(field.name)
            # An enumerated attribute whose fill is no key of its
            # enumeration reads fill cells as nulls: nullable in every read.
            values = {e["name"]: e["values"] for e in schema.enumerations}
            fill_is_null = a.enum_label is not None and not 0 <= int(a.fill) < len(values[a.enum_label])
            assert field.nullable == (a.nullable or fill_is_null), field.name
            if a.enum_label is not None:
                assert pa.types.is_dictionary(field.type), field.name
        t = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
            t = t.value_type
        expected = {
            "INT8": pa.int8(), "INT16": pa.int16(), "INT32": pa.int32(), "INT64": pa.int64(),
            "UINT8": pa.uint8(), "UINT16": pa.uint16(), "UINT32": pa.uint32(), "UINT64": pa.uint64(),
            "FLOAT32": pa.float32(), "FLOAT64": pa.float64(), "BOOL": pa.bool_(),
            "STRING_ASCII": pa.string(), "STRING_UTF8": pa.string(),
            "DATETIME_MS": pa.timestamp("ms"), "DATETIME_NS": pa.timestamp("ns"),
            "DATETIME_US": pa.timestamp("us"), "DATETIME_SEC": pa.timestamp("s"),
            "BLOB": pa.binary(), "CHAR": pa.binary(),
        }.get(tiledb_type)
        if expected is not None and not pa.types.is_dictionary(field.type):
            assert t == expected, (field.name, tiledb_type, t)
