"""tessera's, tessera.soma's and tessera.tiledb's modules import one way
only: each imports (at the top or inside a function) only modules listed
before it here, so there is no import circle, and adding one fails this
test. The top-level package is below both subpackages: its modules never
import them."""

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


TOP = REPO / "crates" / "tessera-python" / "python" / "tessera"
TOP_ORDER = [
    "_convert", "_meta", "_schema", "_storage_keys", "_view", "_write", "_array", "_group", "_maintain", "dask",
    "__init__",
]
# The compiled extension, below every Python module.
NATIVE = "_native"

PACKAGES = [(SOMA, ORDER, BACKWARD), (TILEDB, TILEDB_ORDER, set()), (TOP, TOP_ORDER, set())]


def test_every_module_is_in_the_order():
    for folder, order, _ in PACKAGES:
        assert sorted(p.stem for p in folder.glob("*.py")) == sorted(order), folder.name


def test_modules_import_only_those_before_them():
    wrong = []
    for folder, order, backward in PACKAGES:
        for i, name in enumerate(order):
            for used in imports(folder / f"{name}.py"):
                if used != NATIVE and used not in order[:i] and (name, used) not in backward:
                    wrong.append(f"{folder.name}.{name} imports {used}")
    assert not wrong, wrong


def test_the_top_level_package_never_imports_its_subpackages():
    below = ("tessera.soma", "tessera.tiledb")
    wrong = []
    for path in TOP.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
                names = [f"tessera.{n.split('.')[0]}" for n in names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            wrong += [f"{path.name} imports {n}" for n in names if n.startswith(below)]
    assert not wrong, wrong
