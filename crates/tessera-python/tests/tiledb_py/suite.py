"""TileDB-Py 0.36.1's own test suite, which ships in its wheel
(``tiledb/tests``), run unchanged twice: against the real TileDB-Py
(libtiledb) installed beside tessera, and with ``import tiledb`` resolved
to ``tessera.tiledb`` (``shim/tiledb``). Each run is a pytest process
with TileDB-Py's own pytest settings; the outcome of every test is read
from its JUnit report.

    python suite.py [--docs FILE] [--update] [FILE_STEM ...]

prints each file's counts and the tests that TileDB-Py passes and
tessera does not, checked against ``not_passing.txt`` (an unlisted one
fails the run); with ``--docs``, writes the per-file table into FILE
between the ``tiledb-py-suite`` markers; with ``--update``, writes
``not_passing.txt`` anew: each such test with why it fails.
"""

import fnmatch
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The files the suite runs, in the order the issue names them.
FILES = [
    "test_libtiledb", "test_query_condition", "test_multi_index", "test_pandas_dataframe", "test_group",
    "test_fragments", "test_metadata", "test_schema_evolution", "test_enumeration", "test_current_domain",
    "test_aggregates", "test_read_subarray", "test_write_subarray", "test_subarray", "test_attribute",
    "test_dimension", "test_domain", "test_array_schema", "test_filters", "test_dimension_label", "test_util",
    "test_vfs", "test_timestamp_overrides", "test_fixes",
]
# TileDB-Py's pytest settings (its pyproject.toml), for both runs.
PYTEST_INI = """[pytest]
python_classes = *Test*
python_files = test_*.py
addopts = --import-mode=importlib -p no:cacheprovider --continue-on-collection-errors
filterwarnings =
    error
    default::pytest.PytestWarning
    default::DeprecationWarning:distributed
    ignore:Passing a BlockManager to DataFrame is deprecated:DeprecationWarning
"""


def installed_tests():
    """The test suite inside the installed TileDB-Py wheel."""
    spec = importlib.util.find_spec("tiledb")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("TileDB-Py (PyPI tiledb) is not installed: the suite ships inside it")
    tests = Path(spec.submodule_search_locations[0]) / "tests"
    if not (tests / "conftest.py").exists():
        raise SystemExit(f"{tests}: TileDB-Py's wheel holds no test suite")
    return tests


def run(peer, files, work):
    """Runs ``files`` against ``peer`` ("tiledb" or "tessera") in a pytest
    process; ``{test id: "passed" | "failed" | "skipped"}``, ids as
    ``test_file.py::Class::test[param]``."""
    root = work / peer
    package = root / "tiledb"
    shutil.copytree(installed_tests(), package / "tests", ignore=shutil.ignore_patterns("__pycache__", "perf"))
    if peer == "tessera":
        shutil.copy(HERE / "shim" / "tiledb" / "__init__.py", package / "__init__.py")
        env_path = str(root)
    else:
        # The real package: only its tests are copied, run as tiledb.tests.
        (package / "__init__.py").write_text("")
        shutil.rmtree(package)
        shutil.copytree(installed_tests(), root / "tiledb_tests" / "tiledb" / "tests",
                        ignore=shutil.ignore_patterns("__pycache__", "perf"))
        package = root / "tiledb_tests" / "tiledb"
        env_path = ""
    (root / "pytest.ini").write_text(PYTEST_INI)
    report = root / "junit.xml"
    env = dict(os.environ, PYTHONPATH=env_path + os.pathsep + os.environ.get("PYTHONPATH", ""))
    paths = [str(package / "tests" / f"{f}.py") for f in files]
    command = [sys.executable, "-m", "pytest", "-q", "-c", str(root / "pytest.ini"), "--rootdir", str(root),
               f"--junitxml={report}", "-o", "junit_family=xunit1", *paths]
    for attempt in (1, 2):
        done = subprocess.run(command, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=3600)
        if report.exists():
            return outcomes(report)
        # pytest ended without a report: the process crashed (a signal).
        # The real TileDB-Py has crashed so once on a loaded machine: said,
        # and run once more; a second crash fails the run.
        tail = done.stderr.decode(errors="replace")[-4000:]
        print(f"the {peer} run (attempt {attempt}) ended with code {done.returncode} and no report:\n{tail}",
              file=sys.stderr)
    raise SystemExit(f"the {peer} run crashed twice")


def outcomes(report):
    """``{test id: outcome}``, and ``{test id: why}`` for those that failed."""
    out, why = {}, {}
    for case in ET.parse(report).iter("testcase"):
        path = case.get("file") or ""
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        module = Path(path).name if path else case.get("classname", "").split(".")[-2] + ".py"
        test = f"{module}::{cls}::{case.get('name')}" if cls and not cls.startswith("test_") else \
            f"{module}::{case.get('name')}"
        if not cls and case.get("name", "").startswith("tiledb.tests.test_"):
            # The file itself did not import: every test in it.
            file = case.get("name").rsplit(".", 1)[-1] + ".py"
            for child in case:
                errors = [ln[1:].strip() for ln in (child.text or "").splitlines() if ln.startswith("E ")]
                why[file] = "its file does not import under tessera.tiledb: " + reason(errors[-1] if errors else "")
            continue
        kinds = {child.tag for child in case}
        out[test] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                why[test] = reason(child.get("message") or child.text or "")
    return out, why


# What a failure's message means, said once for the many tests it stops.
_REASONS = [
    ("No module named 'tiledb.main'", "needs tiledb.main, TileDB-Py's C++ core module, which tessera.tiledb has no "
                                      "counterpart of"),
    ("No module named 'tiledb.", "imports a TileDB-Py module tessera.tiledb does not have yet"),
    ("has no attribute 'create_label_schema'", "dimension labels are not in tessera.tiledb"),
    ("DimLabel", "dimension labels are not in tessera.tiledb"),
    ("has no attribute 'Subarray'", "tiledb.Subarray is not in tessera.tiledb"),
    ("has no attribute 'array_fragments'", "fragment info (tiledb.array_fragments) is not in tessera.tiledb"),
    ("FragmentInfo", "fragment info is not in tessera.tiledb"),
    ("has no attribute 'stats_", "libtiledb statistics are not kept by tessera"),
    ("has no attribute 'ArraySchemaEvolution'", "schema evolution is not in tessera.tiledb"),
    ("has no attribute 'from_pandas'", "from_pandas is not in tessera.tiledb"),
    ("has no attribute 'consolidate'", "consolidate is not in tessera.tiledb"),
    ("has no attribute 'vacuum'", "vacuum is not in tessera.tiledb"),
    ("consolidate_metadata", "Group.consolidate_metadata is not in tessera.tiledb"),
    ("Unsupported item type", "metadata of this value type (numpy arrays, nested lists) is not written"),
]


def reason(message):
    """Why a test fails, from its failure message."""
    first = message.strip().splitlines()[0] if message.strip() else "fails"
    # Paths of this machine (temporary folders) say nothing: left out.
    first = re.sub(r"\s*\(/[^)]*\)", "", first)
    first = re.sub(r"(?<![\w.])/[^\s:'\"]+", "<path>", first)
    for needle, text in _REASONS:
        if needle in message:
            return text
    first = first.replace("#", "number")
    return "fails: " + (first[:160] + "..." if len(first) > 160 else first)


def not_passing():
    """``not_passing.txt``: ``pattern  # why`` lines (fnmatch patterns over
    test ids); each pattern with its reason."""
    listed = []
    for line in (HERE / "not_passing.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pattern, _, why = line.partition("  # ")
        if not why.strip():
            raise SystemExit(f"not_passing.txt: {pattern.strip()} has no reason")
        listed.append((pattern.strip(), why.strip()))
    return listed


def compare(files, work):
    """Both runs; per file ``(tessera passed, TileDB-Py passed, tests)`` and
    the tests TileDB-Py passes that tessera does not."""
    theirs, _ = run("tiledb", files, work)
    ours, why = run("tessera", files, work)
    table, missing = {}, []
    for f in files:
        ids = [t for t in theirs if t.startswith(f"{f}.py::")]
        passed_theirs = [t for t in ids if theirs[t] == "passed"]
        passed_ours = [t for t in passed_theirs if ours.get(t) == "passed"]
        table[f] = (len(passed_ours), len(passed_theirs), len(ids))
        missing += [(t, why.get(t) or why.get(f"{f}.py") or "skipped under tessera.tiledb") for t in passed_theirs
                    if ours.get(t) != "passed"]
    return table, missing


def markdown(table):
    rows = ["| file | tessera.tiledb passes | TileDB-Py passes | tests |", "|---|---:|---:|---:|"]
    for f, (ours, theirs, n) in table.items():
        rows.append(f"| {f} | {ours} | {theirs} | {n} |")
    ours = sum(v[0] for v in table.values())
    theirs = sum(v[1] for v in table.values())
    rows.append(f"| all | {ours} ({100 * ours / max(theirs, 1):.0f} %) | {theirs} | "
                f"{sum(v[2] for v in table.values())} |")
    return "\n".join(rows)


def write_docs(path, table):
    text = Path(path).read_text()
    start, end = "<!-- tiledb-py-suite:start -->", "<!-- tiledb-py-suite:end -->"
    a, b = text.index(start) + len(start), text.index(end)
    Path(path).write_text(text[:a] + "\n" + markdown(table) + "\n" + text[b:])


def main(argv):
    docs, update = None, False
    while argv[:1] in (["--docs"], ["--update"]):
        if argv[0] == "--docs":
            docs, argv = argv[1], argv[2:]
        else:
            update, argv = True, argv[1:]
    files = argv or FILES
    with tempfile.TemporaryDirectory(prefix="tiledb-py-suite-") as work:
        table, missing = compare(files, Path(work))
    print(markdown(table))
    if update:
        header = ("# The tests of TileDB-Py 0.36.1's suite that TileDB-Py passes on this machine and\n"
                  "# tessera.tiledb does not, each with why (suite.py --update writes it).\n")
        lines = [f"{t}  # {why}" for t, why in missing]
        (HERE / "not_passing.txt").write_text(header + "\n".join(lines) + "\n")
    listed = not_passing()
    unlisted = [t for t, _ in missing if not any(t == p or fnmatch.fnmatchcase(t, p) for p, _ in listed)]
    print(json.dumps({"not_passing": len(missing), "unlisted": unlisted[:50], "unlisted_count": len(unlisted)}))
    if docs:
        write_docs(docs, table)
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
