"""TileDB-SOMA's Python API over tessera's reads: a script that reads
single-cell experiments with ``tiledbsoma`` ports by changing its import.

    >>> import tessera.soma as soma
    >>> exp = soma.open("testdata/soma/experiment_appended/experiment")
    >>> obs = exp.obs.read(value_filter="cell_type == 'B cell'").concat()   # a pyarrow.Table
    >>> q = exp.axis_query("RNA", obs_query=soma.AxisQuery(value_filter="n_genes > 1000"))
    >>> X = q.X("data").tables().concat()                                  # soma_dim_0, soma_dim_1, soma_data

Objects open as the class their ``soma_object_type`` metadata names
(Experiment, Measurement, Collection, DataFrame, SparseNDArray,
DenseNDArray), read only; ``Experiment.open(uri)`` and the like check
the class. On object stores, a ``SOMATileDBContext(tiledb_config=...)``
with libtiledb's ``vfs.s3.*``, ``vfs.azure.*`` or ``vfs.gcs.*`` keys sets
the storage's endpoint, region and credentials over the environment's.
Results have tiledbsoma's types: pyarrow tables with dictionary columns
for enumerations, ``SparseCOOTensor``s, scipy matrices, AnnData objects
(``anndata`` and ``scipy`` installed).
Errors are ``tessera.TesseraError``s naming the object and the problem,
and also the ``ValueError``, ``KeyError`` or ``TypeError`` tiledbsoma
raises for it.
"""

from . import io
from ._arrays import DataFrame, DenseNDArray, SparseNDArray, SparseNDArrayRead
from ._arrow import TableReadIter
from ._collection import Collection, Experiment, Measurement, open
from ._context import SOMATileDBContext
from ._errors import AlreadyExistsError, DoesNotExistError, SOMAError
from ._query import AxisQuery, ExperimentAxisQuery

__all__ = [
    "AlreadyExistsError",
    "DoesNotExistError",
    "AxisQuery",
    "Collection",
    "DataFrame",
    "DenseNDArray",
    "Experiment",
    "ExperimentAxisQuery",
    "Measurement",
    "SOMAError",
    "SOMATileDBContext",
    "SparseNDArray",
    "SparseNDArrayRead",
    "TableReadIter",
    "io",
    "open",
]
