"""TileDB-SOMA's Python API over tessera's reads: a script that reads
single-cell experiments with ``tiledbsoma`` ports by changing its import.

    >>> import tessera.soma as soma
    >>> exp = soma.open("testdata/soma/experiment_appended/experiment")
    >>> obs = exp.obs.read(value_filter="cell_type == 'B cell'").concat()   # a pyarrow.Table
    >>> q = exp.axis_query("RNA", obs_query=soma.AxisQuery(value_filter="n_genes > 1000"))
    >>> X = q.X("data").tables().concat()                                  # soma_dim_0, soma_dim_1, soma_data

Objects open as the class their ``soma_object_type`` metadata names
(Experiment, Measurement, Collection, DataFrame, SparseNDArray,
DenseNDArray), read only. Results have tiledbsoma's types: pyarrow
tables with dictionary columns for enumerations, ``SparseCOOTensor``s,
scipy matrices, AnnData objects (``anndata`` and ``scipy`` installed).
"""

from . import io
from ._arrays import DataFrame, DenseNDArray, SparseNDArray, SparseNDArrayRead
from ._arrow import TableReadIter
from ._collection import Collection, Experiment, Measurement, SOMAError, open
from ._query import AxisQuery, ExperimentAxisQuery

__all__ = [
    "AxisQuery",
    "Collection",
    "DataFrame",
    "DenseNDArray",
    "Experiment",
    "ExperimentAxisQuery",
    "Measurement",
    "SOMAError",
    "SparseNDArray",
    "SparseNDArrayRead",
    "TableReadIter",
    "io",
    "open",
]
