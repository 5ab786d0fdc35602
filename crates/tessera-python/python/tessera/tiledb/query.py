"""Queries as TileDB-Py makes them: ``A.query(attrs, cond, dims, order,
...)`` indexed with ``[...]`` (numpy's half-open slices),
``.multi_index[...]`` (inclusive ranges, lists of them) or ``.df[...]``
(a pandas DataFrame), with a condition in TileDB-Py's grammar
(:mod:`.query_condition`)."""

import numpy as np

from . import stats
from .libtiledb import TileDBError
from .multirange_indexing import DataFrameIndexer, LabelIndexer, MultiRangeIndexer
from .query_condition import QueryCondition, native_condition

_ORDERS = {None: None, "C": "row-major", "F": "col-major", "G": "global-order", "U": "unordered"}


class Query:
    """What to read (see the module)."""

    def __init__(self, array, attrs=None, cond=None, dims=None, coords=None, index_col=True, order=None,
                 use_arrow=None, return_arrow=False, return_incomplete=False):
        if order not in _ORDERS:
            raise ValueError(f"order must be one of 'C', 'F', 'G', 'U', not {order!r}")
        if array.mode == "d" and not array.schema.sparse:
            raise TileDBError("Delete mode is not supported for queries on Dense Arrays")
        if array.schema.sparse is False and order == "U":
            raise TileDBError("unordered reads take sparse arrays")
        if return_arrow and use_arrow is False:
            raise TileDBError("Cannot initialize return_arrow with use_arrow=False")
        self.array = array
        # A name given twice is read once.
        self.attrs = None if attrs is None else list(dict.fromkeys(attrs))
        if isinstance(cond, str) and cond.strip():
            cond = QueryCondition(cond)
        self.cond = cond
        if dims is False:
            dims = []
        elif dims is True:
            dims = [d.name for d in array.schema.domain]
        self.dims = None if dims is None else list(dims)
        self.has_coords = coords
        self.order = order
        self._stats = {}
        self.use_arrow = use_arrow
        self.return_arrow = return_arrow
        self.return_incomplete = return_incomplete
        self.index_col = index_col
        for name in (self.attrs or []):
            if not (array.schema.has_attr(name) or array.schema.domain.has_dim(name)):
                raise TileDBError(f"Selected attribute does not exist: '{name}'")

    def _cond_text(self):
        return native_condition(self.cond, self.array.schema)

    def _names(self, with_coords_default):
        schema = self.array.schema
        attrs = [a for a in (self.attrs if self.attrs is not None else self.array._read_attrs)
                 if schema.has_attr(a)]
        dims_in_attrs = [a for a in (self.attrs or []) if schema.domain.has_dim(a)]
        # Named dimensions, else all of them where coordinates are asked
        # for (by default: a sparse array's), else none.
        if self.dims is not None:
            dims = list(self.dims)
        elif self.has_coords or (self.has_coords is None and with_coords_default):
            dims = [d.name for d in schema.domain]
        else:
            dims = []
        return attrs, dims + [d for d in dims_in_attrs if d not in dims]

    def __getitem__(self, key):
        # Coordinates come by default from sparse arrays only.
        if self.return_incomplete and not self.array.schema.sparse:
            raise TileDBError("return_incomplete: incomplete reads are given for sparse arrays only")
        if self.return_arrow:
            raise TileDBError("`return_arrow=True` requires .df indexer")
        names = self._names(self.array.schema.sparse)
        with stats.timer("py.getitem_time", self._stats):
            return self.array._answer(self.array._read_box(key, self, names), coords=bool(names[1]))

    def get_stats(self, print_out=True, json=False):
        """What this query's reads took (empty before it ran)."""
        text = stats.render({}, self._stats, json) if self._stats else ""
        if print_out and text:
            print(text)
        return text

    @property
    def multi_index(self):
        return MultiRangeIndexer(self.array, self)

    @property
    def df(self):
        return DataFrameIndexer(self.array, self)

    def label_index(self, labels):
        """``[...]`` by ranges of ``labels`` (see :class:`LabelIndexer`)."""
        return LabelIndexer(self.array, labels, self)

    def agg(self, aggs):
        """Aggregates of the cells a selection reads: ``"sum"``, ``"min"``,
        ``"max"``, ``"mean"``, ``"count"``, ``"null_count"``; one name, a
        list of them (for every attribute), or ``{attr: name(s)}``."""
        schema = self.array.schema
        if isinstance(aggs, dict):
            wanted = {a: [v] if isinstance(v, str) else list(v) for a, v in aggs.items()}
        else:
            names = [aggs] if isinstance(aggs, str) else list(aggs)
            wanted = {a: list(names) for a in (self.attrs or schema.attr_names)}
        for attr, names in wanted.items():
            if not schema.has_attr(attr):
                raise TileDBError(f"aggregate: the array has no attribute {attr!r}")
            for name in names:
                if name not in _AGGREGATES:
                    raise TileDBError(f"Invalid aggregation operation: {name!r}")
                if name == "null_count" and not schema.attr(attr).isnullable:
                    raise TileDBError(f"null_count: attribute {attr!r} is not nullable")
                if name not in ("count", "null_count") and schema.attr(attr).dtype.kind not in "iufbmM":
                    raise TileDBError(f"{name}: attribute {attr!r} is not numeric")
        return Aggregation(self, wanted)

    def submit(self):
        """Runs a delete (the array open in mode ``"d"``): the cells the
        condition selects are deleted as of the array's timestamp, by a
        delete commit libtiledb applies as its own."""
        array = self.array
        if array.mode != "d":
            kind = "Sparse" if array.schema.sparse else "Dense"
            raise TileDBError(f"{array.mode!r}: Write mode is not supported for queries on {kind} Arrays; "
                              "Query.submit deletes, with the array open in mode 'd'")
        cond = self._cond_text()
        if cond is None:
            raise TileDBError("Cannot initialize deletes; One condition is needed")
        array._delete_cells(cond)


_AGGREGATES = ("sum", "min", "max", "mean", "count", "null_count")


def _aggregate(name, values):
    """One aggregate of a field's values (a masked array's masked values
    are nulls)."""
    mask = np.ma.getmaskarray(values) if isinstance(values, np.ma.MaskedArray) else None
    data = np.asarray(values).ravel()
    valid = data if mask is None else data[~mask.ravel()]
    if name == "count":
        return len(data)
    if name == "null_count":
        return 0 if mask is None else int(mask.sum())
    if len(data) == 0:
        # No cell: libtiledb's sum is 0 and its mean NaN.
        if name == "sum":
            return 0
        if name == "mean":
            return float("nan")
    if len(valid) == 0:
        # Only nulls (or no cell): NaN for floats, nothing for integers.
        return float("nan") if data.dtype.kind == "f" else None
    if name in ("sum", "mean"):
        if data.dtype.kind == "f":
            total = float(np.sum(valid, dtype=np.float64))
        else:
            total = int(np.sum(valid.astype(object)))
        return total if name == "sum" else total / len(valid)
    return valid.min() if name == "min" else valid.max()


class _Answered:
    """An indexer whose selections ``answer`` turns into aggregates."""

    def __init__(self, indexer, answer):
        self._indexer, self._answer = indexer, answer

    def __getitem__(self, key):
        return self._answer(self._indexer[key])


class Aggregation:
    """``A.query().agg(...)`` indexed: the aggregates of the cells selected."""

    def __init__(self, query, wanted):
        self.query = query
        self.wanted = wanted

    def _answer(self, fields):
        out = {attr: {name: _aggregate(name, fields[attr]) for name in names}
               for attr, names in self.wanted.items()}
        if len(out) == 1:
            (only,) = out.values()
            return next(iter(only.values())) if len(only) == 1 else only
        return out

    def _reading(self):
        q = self.query
        return Query(q.array, attrs=list(self.wanted), cond=q.cond, dims=False, order=q.order)

    def __getitem__(self, key):
        return self._answer(self._reading()[key])

    @property
    def multi_index(self):
        return _Answered(self._reading().multi_index, self._answer)

    def label_index(self, labels):
        return _Answered(self._reading().label_index(labels), self._answer)

    @property
    def df(self):
        raise NotImplementedError("aggregates are given as values, not data frames")


