"""An ``.h5ad`` file opened for ingestion: obs, var and uns read into
memory, and every matrix (X, layers, obsm, varm, obsp, varp, raw's X)
left in the file, to be read a chunk at a time. anndata's own backed mode
keeps only X in the file and reads the layers whole, so memory would grow
with the cells; this does not.

    >>> with H5ADSource(path) as source:   # obs, var, X, layers, ... as AnnData names them
    ...     source.X[0:100]                # a scipy CSR chunk, read then
"""

import numpy as np


# The mappings of matrices an AnnData holds.
_MAPPINGS = ("layers", "obsm", "varm", "obsp", "varp")


class _Raw:
    def __init__(self, var, X):
        self.var = var
        self.X = X
        self.n_vars = len(var)


class _Compressed:
    """A CSR or CSC matrix left in the file (its group's ``data``,
    ``indices`` and ``indptr``): a slice along its compressed axis (rows
    of a CSR, columns of a CSC) reads just that slice's values; other
    indexing goes through anndata's sparse dataset. Reading the slices
    straight from h5py holds a chunk, where anndata's dataset held about
    20 MiB more on a 2.5-million-value matrix."""

    def __init__(self, group, format):
        self.group = group
        self.format = format
        self.shape = tuple(int(n) for n in group.attrs["shape"])
        self.dtype = group["data"].dtype
        self._indptr = None
        self._backed = None

    @property
    def indptr(self):
        if self._indptr is None:
            self._indptr = np.asarray(self.group["indptr"][...], dtype=np.int64)
        return self._indptr

    @property
    def nnz(self):
        return int(self.indptr[-1])

    def __getitem__(self, key):
        import scipy.sparse as sp

        key = key if isinstance(key, tuple) else (key, slice(None))
        major, minor = key if self.format == "csr" else key[::-1]
        axis = 0 if self.format == "csr" else 1
        if len(key) == 2 and _whole(minor) and isinstance(major, slice) and major.step in (None, 1):
            start, stop, _ = major.indices(self.shape[axis])
            stop = max(start, stop)
            lo, hi = int(self.indptr[start]), int(self.indptr[stop])
            data = self.group["data"][lo:hi]
            indices = self.group["indices"][lo:hi]
            pointers = self.indptr[start:stop + 1] - lo
            if axis == 0:
                return sp.csr_matrix((data, indices, pointers), shape=(stop - start, self.shape[1]))
            return sp.csc_matrix((data, indices, pointers), shape=(self.shape[0], stop - start))
        if self._backed is None:
            from anndata.io import sparse_dataset

            self._backed = sparse_dataset(self.group)
        return self._backed[key]


def _whole(index):
    return isinstance(index, slice) and index == slice(None)


def _matrix(elem):
    """A matrix element left in the file: a sparse one as a
    :class:`_Compressed`, a dense one as its h5py dataset; anything else
    read whole."""
    import h5py
    from anndata.io import read_elem

    kind = elem.attrs.get("encoding-type", "")
    if isinstance(kind, bytes):
        kind = kind.decode()
    if isinstance(elem, h5py.Group) and kind in ("csr_matrix", "csc_matrix"):
        return _Compressed(elem, kind[:3])
    if isinstance(elem, h5py.Dataset) and elem.ndim == 2:
        return elem
    return read_elem(elem)


class H5ADSource:
    """The parts of an ``.h5ad`` file an ingestion writes, with AnnData's
    names; a context manager that closes the file."""

    def __init__(self, path):
        import h5py
        from anndata.io import read_elem

        self._file = h5py.File(str(path), "r")
        f = self._file
        self._legacy = None
        frames = [f.get("obs"), f.get("var")] + [f[n] for n in _MAPPINGS if n in f]
        if not all(isinstance(e, h5py.Group) for e in frames):
            # An older layout (frames as compound datasets): anndata reads
            # it, backed (its layers then in memory).
            f.close()
            self._from_anndata(path)
            return
        try:
            self.obs = read_elem(f["obs"])
            self.var = read_elem(f["var"])
            self.uns = read_elem(f["uns"]) if "uns" in f else {}
            self.X = _matrix(f["X"]) if "X" in f else None
            for name in _MAPPINGS:
                setattr(self, name, {k: _matrix(v) for k, v in f[name].items()} if name in f else {})
            self.raw = None
            if "raw" in f and "X" in f["raw"]:
                self.raw = _Raw(read_elem(f["raw"]["var"]), _matrix(f["raw"]["X"]))
        except BaseException:
            f.close()
            raise

    def _from_anndata(self, path):
        import anndata

        a = anndata.read_h5ad(str(path), backed="r")
        self._legacy = a
        self.obs, self.var, self.uns, self.X = a.obs, a.var, a.uns, a.X
        self.layers, self.obsm, self.varm = dict(a.layers), dict(a.obsm), dict(a.varm)
        self.obsp, self.varp = dict(a.obsp), dict(a.varp)
        self.raw = _Raw(a.raw.var, a.raw.X) if a.raw is not None else None

    @property
    def n_obs(self):
        return len(self.obs)

    @property
    def n_vars(self):
        return len(self.var)

    def obs_names_make_unique(self):
        from anndata.utils import make_index_unique

        self.obs.index = make_index_unique(self.obs.index)

    def var_names_make_unique(self):
        from anndata.utils import make_index_unique

        self.var.index = make_index_unique(self.var.index)

    def close(self):
        if self._legacy is not None and self._legacy.isbacked:
            self._legacy.file.close()
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
