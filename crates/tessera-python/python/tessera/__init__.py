"""Read and write TileDB arrays without libtiledb.

    >>> import tessera
    >>> A = tessera.open("testdata/tiledb-0.36.1/sparse_2d/array")
    >>> table = A.read(attrs=["f"], subarray={"x": (1, 10)})   # a pyarrow.Table
    >>> df = A.df[1:10, :]                                      # pandas, inclusive ranges

Reads run in Rust on a thread of their own, with the GIL released, and
reach pyarrow through the Arrow C stream interface without copying.
Errors are :class:`TesseraError` with tessera's message.
"""

from ._native import TesseraError
from ._array import Array, open
from ._group import Group, object_type, open_group
from ._maintain import ArrayMaintained, consolidate_tree, vacuum_tree
from ._schema import Attribute, Dimension, Filter, Schema
from ._view import View
from ._write import create, write

__all__ = [
    "Array",
    "ArrayMaintained",
    "Attribute",
    "Dimension",
    "Filter",
    "Group",
    "Schema",
    "TesseraError",
    "View",
    "consolidate_tree",
    "create",
    "object_type",
    "open",
    "open_group",
    "vacuum_tree",
    "write",
]
