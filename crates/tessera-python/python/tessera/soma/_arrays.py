"""SOMA's arrays over tessera's reads: DataFrame, SparseNDArray and
DenseNDArray, with tiledbsoma's read methods and result types."""

import json

import numpy as np
import pyarrow as pa

import tessera
from tessera._convert import numbers, storage_pairs

from . import _context, _coords, _create, _writing
from ._arrow import TableReadIter, soma_schema, soma_table
from ._blockwise import BlockwiseRead
from ._errors import SOMAValueError
from ._filter import fields, translate
from ._object import SOMAObject, check_unpartitioned


def _reopened(cls, reopen_args, mode, options):
    """A SOMA array of class ``cls`` opened from what it pickled as."""
    return cls(tessera.open(*reopen_args), mode, options)


class _Array(SOMAObject):
    """What the SOMA arrays share: the tessera array, its domain and shape."""

    def __init__(self, array, mode="r", options=None):
        super().__init__(array.uri, array.meta, mode, options)
        self._array = array
        self._doc = json.loads(array._native.schema_json())

    @classmethod
    def _create(cls, uri, doc, context):
        """Creates the array of schema ``doc`` at ``uri`` with this class's
        SOMA metadata; returns it open for writing."""
        uri = str(uri)
        options = _context.options_for(uri, context)
        metadata = {"soma_object_type": cls.soma_type, "soma_encoding_version": _writing.ENCODING_VERSION}
        _writing.create_object(uri, lambda: tessera.create(uri, doc, storage_options=options), metadata, False,
                               options)
        return cls(tessera.open(uri, storage_options=options), "w", options)

    def __reduce__(self):
        """Pickles as what opens it again, anywhere (a Dask worker, say):
        the URI, mode and storage options, and the timestamp it was
        opened at (pinned: fragments written after its open unseen)."""
        return (_reopened, (type(self), self._array.reopen_args(), self.mode, self._options))

    def _reopen_timestamp(self):
        """The timestamp this array opens again at (see ``__reduce__``)."""
        return self._array.reopen_args()[1]

    def _with_config(self, tiledb_config):
        """This array opened again as it is, with libtiledb's storage keys
        ``tiledb_config`` set over its storage options (on an object store:
        local paths take none, as for any context)."""
        given = _context.options_for(self.uri, _context.SOMATileDBContext(tiledb_config))
        options = {**self._options, **given}
        uri, timestamp, key, _ = self._array.reopen_args()
        return type(self)(tessera.open(uri, timestamp=timestamp, key=key, storage_options=options), self.mode,
                          options)

    def _reopen(self):
        """Opens the array again, at its newest schema and fragments."""
        self._array = tessera.open(self.uri, storage_options=self._options)
        self._doc = json.loads(self._array._native.schema_json())
        self.__dict__.pop("_schema", None)

    def _write_table(self, table):
        """Writes ``table`` (the array's own columns and types) as a fragment."""
        self.verify_open_for_writing()
        if table.num_rows:
            tessera.write(self.uri, table, storage_options=self._options)
            self._reopen()

    def _resize(self, ranges):
        """Grows the current domain to ``ranges`` (one ``[lo, hi]`` per dimension)."""
        self.verify_open_for_writing()
        self._evolve({"current_domain": [list(r) for r in ranges]})

    def _evolve(self, evolution):
        """Evolves the schema (``evolution`` as ``_native.evolve`` takes it)
        and opens the array again."""
        self.verify_open_for_writing()
        tessera._native.evolve(self.uri, json.dumps(evolution), None, storage_pairs(self._options))
        self._reopen()

    def _delete(self, coords, where=None):
        """Deletes the cells ``coords`` select that ``where`` (tessera's
        condition) keeps, as one delete commit; nothing when the
        coordinates select nothing."""
        self.verify_open_for_deleting()
        subarray = _coords.subarray(coords, self._dims(), self._current())
        if subarray is None:
            return
        parts = []
        for name, ranges in subarray.items():
            alts = [f"{name} == {_literal(lo)}" if lo == hi
                    else f"({name} >= {_literal(lo)} and {name} <= {_literal(hi)})" for lo, hi in ranges]
            parts.append(alts[0] if len(alts) == 1 else "(" + " or ".join(alts) + ")")
        if where:
            parts.append(f"({where})")
        if not parts:
            # Every cell: a condition no cell fails.
            d = self._doc["dimensions"][0]
            lo = d["domain"][0] if "domain" in d else ""
            parts.append(f"{d['name']} >= {_literal(lo)}")
        tessera._native.delete_cells(self.uri, " and ".join(parts), None, storage_pairs(self._options))
        self._reopen()

    def _check_in_domain(self, table):
        """Raises unless every coordinate of ``table`` lies in the current domain."""
        for (lo, hi), d in zip(self._current(), self._doc["dimensions"]):
            if d["name"] not in table.column_names or d["type"] != "INT64" or not table.num_rows:
                continue
            values = pa.compute.min_max(table.column(d["name"]))
            low, high = values["min"].as_py(), values["max"].as_py()
            if low < int(lo) or high > int(hi):
                raise SOMAValueError(f"{self.uri}: {d['name']} values {low} to {high} lie outside the domain "
                                     f"[{lo}, {hi}]: resize it first")

    @property
    def is_sparse(self):
        return self._doc["array_type"] == "sparse"

    @property
    def ndim(self):
        return len(self._doc["dimensions"])

    def _dims(self):
        return self._array.schema.dims

    def _current(self):
        """Per dimension the inclusive ``(lo, hi)`` in force: the current
        domain where the array has one, else the dimension's domain."""
        current = self._doc.get("current_domain")
        dims = self._doc["dimensions"]
        if current and len(current) == len(dims):
            return [tuple(r) for r in current]
        return [tuple(d["domain"]) for d in dims]

    def non_empty_domain(self):
        return self._array.nonempty_domain()

    def _max(self):
        """Per dimension the inclusive ``(lo, hi)`` the domain may grow to."""
        return [tuple(d["domain"]) if "domain" in d else ("", "") for d in self._doc["dimensions"]]

    @property
    def schema(self):
        """The fields a read returns, as a ``pyarrow.Schema``: index
        columns (``soma_dim_*``) first."""
        if not hasattr(self, "_schema"):
            self._schema = soma_schema(self._array._native.arrow_schema())
        return self._schema

    def _cell_count(self):
        """The cells a whole read returns, no field decoded for it."""
        return self._array.read(attrs=[], dims=False).num_rows

    def _read(self, coords, **kwargs):
        """The read of ``coords`` as two calls: the whole result as one
        table, and its record batches one at a time (none when the
        coordinates select nothing)."""
        subarray = _coords.subarray(coords, self._dims(), self._current())
        if subarray is None:
            return (lambda: self._empty(**kwargs)), (lambda: iter(()))

        def whole():
            return self._array.read(subarray=subarray, **kwargs)

        def batches():
            return self._array.iter_batches(subarray=subarray, budget=_coords.BATCH_BYTES, **kwargs)

        return whole, batches

    def _empty(self, **kwargs):
        """A read that selects nothing, with the fields it would have: one
        coordinate read, no rows kept."""
        (lo, _), d = self._current()[0], self._dims()[0]
        return self._array.read(subarray={d.name: [(lo, lo)]}, **kwargs).slice(0, 0)


class DataFrame(_Array):
    """A SOMA DataFrame (``obs``, ``var``): rows indexed by ``soma_joinid``
    (and any other index columns)."""

    soma_type = "SOMADataFrame"

    @classmethod
    def create(cls, uri, *, schema, index_column_names=("soma_joinid",), domain=None, platform_config=None,
               context=None, tiledb_timestamp=None):
        """Creates an empty DataFrame with the columns of the Arrow
        ``schema`` (``soma_joinid`` added if missing), indexed by
        ``index_column_names``, ``domain`` (one ``(lo, hi)`` per index
        column) in force; returns it open for writing."""
        return cls._create(uri, _create.dataframe_schema(schema, index_column_names, domain), context)

    def write(self, values, platform_config=None):
        """Writes the rows of ``values`` (a ``pyarrow.Table`` or record batch
        with every column of the DataFrame); a row whose index values were
        written before replaces it. Dictionary columns' new values extend
        their enumerations."""
        self.verify_open_for_writing()
        if isinstance(values, pa.RecordBatch):
            values = pa.Table.from_batches([values])
        if not isinstance(values, pa.Table):
            raise SOMAValueError(f"{self.uri}: write takes a pyarrow.Table, not {type(values).__name__}")
        cells, extend = _writing.dataframe_cells(self.uri, self._doc, values)
        self._check_in_domain(cells)
        if extend:
            self._evolve(_writing.extension(extend))
        self._write_table(cells)
        return self

    @property
    def maxdomain(self):
        """Per index column the inclusive ``(lo, hi)`` the domain may grow to."""
        return tuple(self._max())

    def get_enumeration_values(self, column_names):
        """Each named enumerated column's values, as a ``pyarrow.Array``."""
        enums = self._enumerations()
        out = {}
        for name in column_names:
            if name not in enums:
                raise KeyError(f"column name '{name}' is not of dictionary type")
            out[name] = pa.array(enums[name]).cast(self.schema.field(name).type.value_type)
        return out

    def extend_enumeration_values(self, values, deduplicate=False):
        """Appends ``values`` (``{column: pyarrow.Array}``) to the columns'
        enumerations; values already there are refused unless
        ``deduplicate`` drops them."""
        self.verify_open_for_writing()
        enums = self._enumerations()
        by_column = {a["name"]: a.get("enumeration") for a in self._doc["attributes"]}
        extend = {}
        for name, array in values.items():
            if name not in enums:
                raise KeyError(f"schema column name '{name}' is not of dictionary type")
            if not isinstance(array, pa.Array) or pa.types.is_dictionary(array.type):
                raise SOMAValueError(f"value for column name '{name}' must be a plain pyarrow.Array")
            have = set(enums[name])
            new = []
            for v in array.to_pylist():
                if v in have or v in new:
                    if not deduplicate:
                        raise SOMAValueError(f"{self.uri}: enumeration of {name!r} already holds {v!r}")
                    continue
                new.append(v)
            if new:
                extend[by_column[name]] = new
        if extend:
            self._evolve(_writing.extension(extend))

    def delete_cells(self, coords=(), *, value_filter=None, platform_config=None):
        """Deletes the rows ``coords`` select that ``value_filter`` keeps
        (both given: the rows matching both); the domain and enumerations
        stay as they are."""
        if not coords and value_filter is None:
            raise SOMAValueError(f"{self.uri}: delete_cells needs coords or a value_filter")
        # The filter is stored in the delete commit as tiledbsoma stores it
        # (enumerated columns compared by their keys): every reader then
        # applies libtiledb's semantics to it (a null compares false).
        self._delete(coords, self._condition(value_filter))

    def change_domain(self, newdomain, check_only=False):
        """Grows the domain in force to ``newdomain`` (one ``(lo, hi)`` per
        index column)."""
        if check_only:
            return self._domain_change_ok(newdomain)
        ok, why = self._domain_change_ok(newdomain)
        if not ok:
            raise SOMAValueError(f"{self.uri}: {why}")
        self._resize(newdomain)

    def tiledbsoma_resize_soma_joinid_shape(self, newshape, check_only=False):
        """Grows the ``soma_joinid`` domain in force to ``0 .. newshape - 1``."""
        names = self.index_column_names
        domain = [(0, int(newshape) - 1) if n == "soma_joinid" else d for n, d in zip(names, self._current())]
        return self.change_domain(domain, check_only=check_only)

    def _domain_change_ok(self, newdomain):
        if len(newdomain) != len(self._current()):
            return False, f"a domain has one range per index column ({len(self._current())}), not {len(newdomain)}"
        for (lo, hi), (top_lo, top_hi), new, d in zip(self._current(), self._max(), newdomain,
                                                      self._doc["dimensions"]):
            if d["type"] != "INT64":
                continue
            if int(new[0]) > int(lo) or int(new[1]) < int(hi):
                return False, f"{d['name']}: new domain {tuple(new)} does not hold the current one {(lo, hi)}"
            if int(new[0]) < int(top_lo) or int(new[1]) > int(top_hi):
                return False, f"{d['name']}: new domain {tuple(new)} exceeds the maximum {(top_lo, top_hi)}"
        return True, ""

    @property
    def index_column_names(self):
        return tuple(d["name"] for d in self._doc["dimensions"])

    @property
    def domain(self):
        return tuple(self._current())

    @property
    def count(self):
        """The number of rows."""
        return self._cell_count()

    def keys(self):
        return tuple(self.schema.names)

    def read(self, coords=(), column_names=None, *, result_order=None, value_filter=None,
             batch_size=None, partitions=None, platform_config=None):
        """The rows at ``coords`` (per index column: a value, an inclusive
        slice, or a list of values) that ``value_filter`` keeps, with
        ``column_names`` (default all) in that order."""
        check_unpartitioned(partitions)
        dims = set(self.index_column_names)
        columns = self.keys()
        names = list(column_names) if column_names is not None else None
        if names is not None:
            # As tiledbsoma: columns the filter names come too, after the ones asked for.
            names += [n for n in fields(value_filter, columns) if n not in names]
        attrs = None if names is None else [n for n in names if n not in dims]
        unknown = [] if names is None else [n for n in names if n not in columns]
        if unknown:
            raise SOMAValueError(f"{self.uri}: no column {unknown[0]!r} (columns: {', '.join(self.keys())})")
        # The index columns asked for, by name: a read decodes no other
        # dimension's coordinates.
        want_dims = True if names is None else [d for d in self.index_column_names if d in names] or False
        where = self._condition(value_filter)
        kwargs = dict(attrs=attrs, where=where, dims=want_dims, layout=_layout(result_order))
        whole, batches = self._read(coords, **kwargs)
        pick = (lambda t: t) if names is None else (lambda t: t.select(names))
        return TableReadIter(lambda: (pick(soma_table(b)) for b in batches()),
                             lambda: pick(self._whole_dictionaries(soma_table(whole()))))

    def _condition(self, value_filter):
        """``value_filter`` as tessera's condition, checked against the
        frame's schema: one that does not parse, or names a column the
        frame lacks, fails here, naming the frame and the filter."""
        if value_filter is None:
            return None
        try:
            where = translate(value_filter, self._enumerations())
            self._array._native.check_condition(where)
        except tessera.TesseraError as e:  # SOMAValueError too
            problem = str(e).removeprefix("--where: ").removeprefix("value_filter: ")
            raise SOMAValueError(f"{self.uri}: value_filter {value_filter!r}: {problem}") from None
        return where

    def _whole_dictionaries(self, table):
        """An empty result's enumerated columns with the whole enumeration
        as their dictionary (pandas categories), as the rows of a
        non-empty one have."""
        if table.num_rows:
            return table
        enumerations = self._enumerations()
        for i, f in enumerate(table.schema):
            if pa.types.is_dictionary(f.type) and f.name in enumerations:
                values = pa.array(enumerations[f.name]).cast(f.type.value_type)
                empty = pa.DictionaryArray.from_arrays(pa.array([], f.type.index_type), values)
                table = table.set_column(i, f, pa.chunked_array([empty], type=f.type))
        return table

    def _enumerations(self):
        by_name = {e["name"]: e["values"] for e in self._doc.get("enumerations", [])}
        return {a["name"]: by_name[a["enumeration"]] for a in self._doc["attributes"]
                if a.get("enumeration") in by_name}


class _NDArray(_Array):
    _sparse = True

    @classmethod
    def create(cls, uri, *, type, shape, platform_config=None, context=None, tiledb_timestamp=None):
        """Creates an empty array of ``shape`` holding values of the Arrow
        ``type``; returns it open for writing."""
        return cls._create(uri, _create.ndarray_schema(type, shape, cls._sparse), context)

    @property
    def shape(self):
        """Per dimension the number of coordinates in force (0 to shape - 1)."""
        return tuple(int(hi) + 1 for _, hi in self._current())

    @property
    def maxshape(self):
        """Per dimension the size the shape may grow to."""
        return tuple(int(hi) + 1 for _, hi in self._max())

    def resize(self, newshape, check_only=False):
        """Grows the shape in force to ``newshape``."""
        ok = len(newshape) == self.ndim and all(s <= int(n) <= m for n, s, m in
                                                zip(newshape, self.shape, self.maxshape))
        if check_only:
            return ok, "" if ok else f"new shape {tuple(newshape)} does not hold the current {self.shape}"
        if not ok:
            raise SOMAValueError(f"{self.uri}: new shape {tuple(newshape)} does not hold the current {self.shape}")
        self._resize([(0, int(n) - 1) for n in newshape])


class SparseNDArray(_NDArray):
    """A SOMA SparseNDArray (``X`` layers, ``obsp``, ``varp``): cells at
    ``soma_dim_0``, ``soma_dim_1``, ... holding ``soma_data``."""

    soma_type = "SOMASparseNDArray"

    def write(self, values, *, platform_config=None):
        """Writes cells: a ``pyarrow.Table`` of ``soma_dim_*`` and
        ``soma_data`` columns, a ``pyarrow.SparseCOOTensor``, or a
        ``SparseCSRMatrix`` / ``SparseCSCMatrix``; cells written before at
        the same coordinates are replaced."""
        self.verify_open_for_writing()
        table = _coo_table(values, self.ndim, self._doc["attributes"][0]["type"])
        self._check_in_domain(table)
        self._write_table(table)
        return self

    def delete_cells(self, coords, *, platform_config=None):
        """Deletes the cells ``coords`` select; the shape stays."""
        self._delete(coords)

    @property
    def nnz(self):
        """The number of cells written."""
        return self._cell_count()

    def read(self, coords=(), *, result_order=None, batch_size=None, partitions=None,
             platform_config=None):
        """The cells at ``coords`` (per dimension: an index, an inclusive
        slice, or a list of indices), in ``result_order`` (``"auto"``,
        ``"row-major"`` or ``"column-major"``)."""
        check_unpartitioned(partitions)
        return SparseNDArrayRead(self, coords, _layout(result_order))


class SparseNDArrayRead:
    """The cells a :meth:`SparseNDArray.read` selects, as tables, COO
    tensors or blocks of scipy matrices."""

    def __init__(self, array, coords, layout=None):
        self._array = array
        self.coords = coords
        self.shape = array.shape
        self._layout = layout

    def tables(self):
        """A :class:`TableReadIter` of ``soma_dim_*`` and ``soma_data`` columns."""
        whole, batches = self._array._read(self.coords, layout=self._layout)
        return TableReadIter(lambda: (soma_table(b) for b in batches()), lambda: soma_table(whole()))

    def concat(self):
        return self.tables().concat()

    def coos(self):
        """The cells as ``pyarrow.SparseCOOTensor``s of the array's shape, one per batch."""
        _, batches = self._array._read(self.coords, layout=self._layout)
        ndim = self._array.ndim
        for b in batches():
            if b.num_rows == 0:
                continue
            coords = np.column_stack([numbers(b.column(k)) for k in range(ndim)]).astype(np.int64)
            data = numbers(b.column(ndim)).reshape(-1, 1)
            yield pa.SparseCOOTensor.from_numpy(data, coords, shape=self.shape)

    def blockwise(self, axis, *, size=None, reindex_disable_on_axis=None, eager=True):
        """Blocks of ``size`` coordinates along ``axis`` (see :class:`BlockwiseRead`)."""
        return BlockwiseRead(self, axis, size, reindex_disable_on_axis)


class DenseNDArray(_NDArray):
    """A SOMA DenseNDArray (``obsm``, ``varm``, dense ``X``)."""

    soma_type = "SOMADenseNDArray"
    _sparse = False

    def write(self, coords, values, *, platform_config=None):
        """Writes the ``pyarrow.Tensor`` (or numpy array) ``values`` into the
        box ``coords`` selects (per dimension an index or a slice; ``()``
        from the origin), which must have its shape."""
        self.verify_open_for_writing()
        data = np.asarray(values.to_numpy() if isinstance(values, pa.Tensor) else values)
        shape = data.shape if data.ndim == self.ndim else None
        if shape is None:
            raise SOMAValueError(f"{self.uri}: values of {data.ndim} dimensions for an array of {self.ndim}")
        coords = tuple(coords) + (slice(None),) * (self.ndim - len(tuple(coords)))
        box = []
        for c, n, (lo, hi), d in zip(coords, shape, self._current(), self._doc["dimensions"]):
            if isinstance(c, slice):
                start = int(lo) if c.start is None else int(c.start)
                stop = start + n - 1 if c.stop is None else int(c.stop)
            else:
                start = stop = int(c)
            if stop - start + 1 != n:
                raise SOMAValueError(f"{self.uri}: {d['name']}: the box holds {stop - start + 1} coordinates, "
                                     f"the values {n}")
            if start < int(lo) or stop > int(hi):
                raise SOMAValueError(f"{self.uri}: {d['name']} {start} to {stop} lies outside the shape [{lo}, {hi}]")
            box.append((start, stop))
        data_type = _writing._ARROW[self._doc["attributes"][0]["type"]].to_pandas_dtype()
        tessera.write(self.uri, {"soma_data": np.ascontiguousarray(data, dtype=data_type)}, subarray=box,
                      storage_options=self._options)
        self._reopen()
        return self

    def read(self, coords=(), *, result_order=None, partitions=None, platform_config=None):
        """The box ``coords`` selects (per dimension: an index or an
        inclusive slice) as a ``pyarrow.Tensor`` in row-major order."""
        check_unpartitioned(partitions)
        subarray = _coords.subarray(coords, self._dims(), self._current())
        if subarray is None:
            raise SOMAValueError(f"{self.uri}: a dense read takes one range per dimension, not an empty list")
        box = []
        for (lo, hi), d in zip(self._current(), self._dims()):
            ranges = subarray.get(d.name)
            if ranges is None:
                ranges = [(lo, hi)]
            if len(ranges) != 1:
                raise SOMAValueError(f"{self.uri}: a dense read takes one range per dimension, not a list on {d.name}")
            box.append(ranges[0])
        table = self._array.read(attrs=["soma_data"], dims=False, layout="row-major",
                                 subarray={d.name: [r] for d, r in zip(self._dims(), box)})
        values = numbers(table.column("soma_data"))
        shape = tuple(int(hi) - int(lo) + 1 for lo, hi in box)
        return pa.Tensor.from_numpy(values.reshape(shape))


def _literal(v):
    """A coordinate as a literal of tessera's condition grammar."""
    if isinstance(v, (str, bytes)):
        text = v.decode() if isinstance(v, bytes) else v
        return "'" + text.replace("'", "\\'") + "'"
    return repr(v)


def _coo_table(values, ndim, data_type):
    """SparseNDArray cells from what ``write`` takes, as a table of
    ``soma_dim_*`` (int64) and ``soma_data`` of the array's type."""
    names = [f"soma_dim_{i}" for i in range(ndim)]
    to = _writing._ARROW[data_type]
    if isinstance(values, pa.RecordBatch):
        values = pa.Table.from_batches([values])
    if isinstance(values, pa.Table):
        want = names + ["soma_data"]
        if sorted(values.column_names) != sorted(want):
            raise SOMAValueError(f"a SparseNDArray write takes columns {want}, not {values.column_names}")
        return pa.table({n: values.column(n).cast(pa.int64() if n != "soma_data" else to) for n in want})
    if isinstance(values, pa.SparseCOOTensor):
        data, coords = values.to_numpy()
        coords = np.asarray(coords)
        columns = {n: pa.array(coords[:, i].astype(np.int64)) for i, n in enumerate(names)}
    elif isinstance(values, (pa.SparseCSRMatrix, pa.SparseCSCMatrix)):
        if ndim != 2:
            raise SOMAValueError(f"a {type(values).__name__} fills a 2-D array, not a {ndim}-D one")
        m = values.to_scipy().tocoo()
        data = m.data
        columns = {"soma_dim_0": pa.array(m.row.astype(np.int64)), "soma_dim_1": pa.array(m.col.astype(np.int64))}
    else:
        raise SOMAValueError(f"a SparseNDArray write takes a pyarrow Table, SparseCOOTensor, SparseCSRMatrix or "
                             f"SparseCSCMatrix, not {type(values).__name__}")
    columns["soma_data"] = pa.array(np.asarray(data).ravel()).cast(to)
    return pa.table(columns)


def _layout(result_order):
    """The read layout of a SOMA ``result_order`` (a ``ResultOrder`` or its
    name): ``None`` (the read's own order) for ``auto``."""
    name = getattr(result_order, "value", result_order)
    layouts = {None: None, "auto": None, "row-major": "row-major", "column-major": "col-major"}
    if name not in layouts:
        raise SOMAValueError(f"result_order {result_order!r}: expected auto, row-major or column-major")
    return layouts[name]
