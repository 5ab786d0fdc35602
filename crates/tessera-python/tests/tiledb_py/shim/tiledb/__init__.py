"""``import tiledb`` as ``tessera.tiledb``, for TileDB-Py's own test suite
run unchanged (``suite.py`` copies the suite in beside this file as
``tiledb/tests``). ``tiledb`` and every ``tiledb.<module>`` are
``tessera.tiledb`` and its modules, the same objects; only
``tiledb.tests`` is found here."""

import importlib
import importlib.abc
import importlib.util
import os
import sys

import tessera.tiledb as _tessera_tiledb


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``tiledb.X`` -> ``tessera.tiledb.X`` (not ``tiledb.tests``)."""

    _specs = {}

    def find_spec(self, name, path=None, target=None):
        if name.startswith("tiledb.") and name.split(".")[1] != "tests":
            try:
                importlib.import_module("tessera." + name)
            except ModuleNotFoundError:
                return None
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        module = sys.modules["tessera." + spec.name]
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        # The import system gave the module the alias's spec: its own back
        # (relative imports inside it check __package__ against it).
        module.__spec__ = self._specs.pop(module.__name__, module.__spec__)


sys.meta_path.insert(0, _Alias())
_tessera_tiledb.__path__.append(os.path.dirname(os.path.abspath(__file__)))
sys.modules["tiledb"] = _tessera_tiledb
