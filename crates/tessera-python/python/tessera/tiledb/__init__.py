"""TileDB-Py's API on tessera, without libtiledb: ``import tessera.tiledb
as tiledb`` runs code written for TileDB-Py, and TileDB-Py reads what it
writes.

    >>> import tempfile, numpy as np
    >>> import tessera.tiledb as tiledb
    >>> path = tempfile.mkdtemp() + "/a"
    >>> dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int64))
    >>> schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64)])
    >>> tiledb.Array.create(path, schema)
    >>> with tiledb.open(path, "w") as A:
    ...     A[:] = {"a": np.arange(10.0)}
    >>> tiledb.open(path)[2:4]["a"]
    array([2., 3.])
    >>> tiledb.open(path).query(cond="a > 7.5").multi_index[5:9]["a"]   # dense: the fill value elsewhere
    array([nan, nan, nan,  8.,  9.])

What it covers and what it does not: docs/TILEDB_PY.md.
"""

from .array import Array, DenseArray, SparseArray
from .array_schema import ArraySchema
from .attribute import Attr
from .ctx import Config, Ctx, default_ctx, scope_ctx
from .current_domain import CurrentDomain, NDRectangle
from .datatypes import DataType
from .dimension import Dim
from .dimension_label import DimLabel, DimLabelSchema
from .domain import Domain
from .enumeration import Enumeration
from .filter import (BitShuffleFilter, BitWidthReductionFilter, ByteShuffleFilter, Bzip2Filter,
                     ChecksumMD5Filter, ChecksumSHA256Filter, CompressionFilter, DeltaFilter, DictionaryFilter,
                     DoubleDeltaFilter, Filter, FilterList, FloatScaleFilter, GzipFilter, LZ4Filter, NoOpFilter,
                     PositiveDeltaFilter, RleFilter, WebpFilter, XORFilter, ZstdFilter)
from .dataframe_ import from_csv, from_pandas, from_parquet, open_dataframe
from .fragment import (FragmentInfo, FragmentInfoList, array_fragments, copy_fragments_to_existing_array,
                       create_array_from_fragments)
from .group import Group, Object
from .maintenance import consolidate, vacuum
from .highlevel import array_exists, empty_like, from_numpy, ls, move, object_type, open, remove, schema_like, walk
from .libtiledb import TileDBError
from .libtiledb import api_version as version
from .multirange_indexing import EmptyRange
from .subarray import Subarray
from .stats import stats_disable, stats_dump, stats_enable, stats_reset
from .schema_evolution import ArraySchemaEvolution
from .query_condition import QueryCondition
from .metadata import Metadata
from .vfs import VFS, FileIO
from . import libtiledb, main

group_create = Group.create
DenseArrayImpl = DenseArray
SparseArrayImpl = SparseArray
__version__ = version.version
