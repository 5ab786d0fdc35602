"""An ``.h5ad`` file opened for ingestion: obs, var and uns read into
memory, and every matrix (X, layers, obsm, varm, obsp, varp, raw's X)
left in the file, to be read a chunk at a time. anndata's own backed mode
keeps only X in the file and reads the layers whole, so memory would grow
with the cells; this does not.

    >>> with H5ADSource(path) as source:   # obs, var, X, layers, ... as AnnData names them
    ...     source.X[0:100]                # a scipy CSR chunk, read then
"""


# The mappings of matrices an AnnData holds.
_MAPPINGS = ("layers", "obsm", "varm", "obsp", "varp")


class _Raw:
    def __init__(self, var, X):
        self.var = var
        self.X = X
        self.n_vars = len(var)


def _matrix(elem):
    """A matrix element left in the file: a sparse one as anndata's
    sparse dataset (rows or columns sliced from the file), a dense one as
    its h5py dataset; anything else read whole."""
    import h5py
    from anndata.io import read_elem, sparse_dataset

    kind = elem.attrs.get("encoding-type", "")
    if isinstance(kind, bytes):
        kind = kind.decode()
    if isinstance(elem, h5py.Group) and kind in ("csr_matrix", "csc_matrix"):
        return sparse_dataset(elem)
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
