"""tessera.soma's and tessera.tiledb's modules import one way only: each
imports (at the top or inside a function) only modules listed before it
here, so there is no import circle, and adding one fails this test."""

import ast

from conftest import REPO

SOMA = REPO / "crates" / "tessera-python" / "python" / "tessera" / "soma"
ORDER = [
    "_errors", "_metadata", "_object", "_context", "_coords", "_filter", "_arrow", "_matrix", "_blockwise",
    "_create", "_writing", "_arrays", "_dask", "_anndata", "_query", "_collection", "_frames", "_h5ad", "_matrices",
    "_shaping", "_registration", "_ingest", "_distributed", "_update", "io", "__init__",
]
# The one import against the order, inside a function: SOMAObject.open
# (every class's ``open``) calls _collection's open, which knows every
# class. Named here so that no other joins it.
BACKWARD = {("_object", "_collection")}
TILEDB = REPO / "crates" / "tessera-python" / "python" / "tessera" / "tiledb"
TILEDB_ORDER = [
    "libtiledb", "stats", "datatypes", "_values", "_buffers", "ctx", "_open", "filter", "enumeration", "dimension_label",
    "dimension", "domain", "attribute", "current_domain", "array_schema", "subarray", "label_query",
    "multirange_indexing", "query_condition", "query",
    "metadata",
    "fragment", "maintenance", "array", "main", "group", "vfs", "highlevel", "schema_evolution", "dataframe_",
    "__init__",
]


def imports(path):
    """The sibling modules a module imports, wherever in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(alias.name for alias in node.names)
    return out


PACKAGES = [(SOMA, ORDER, BACKWARD), (TILEDB, TILEDB_ORDER, set())]


def test_every_module_is_in_the_order():
    for folder, order, _ in PACKAGES:
        assert sorted(p.stem for p in folder.glob("*.py")) == sorted(order), folder.name


def test_modules_import_only_those_before_them():
    wrong = []
    for folder, order, backward in PACKAGES:
        for i, name in enumerate(order):
            for used in imports(folder / f"{name}.py"):
                if used not in order[:i] and (name, used) not in backward:
                    wrong.append(f"{folder.name}.{name} imports {used}")
    assert not wrong, wrong
