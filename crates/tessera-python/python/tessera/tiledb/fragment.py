"""Fragment info as TileDB-Py gives it: ``tiledb.array_fragments(uri)``,
a :class:`FragmentInfoList` of :class:`FragmentInfo`, from the fragments
tessera lists for the array (consolidated-away ones hidden, as
libtiledb's fragment info hides them)."""

import json
import os

from ._open import open_native
from ._values import from_json
from .ctx import local_path
from .array_schema import ArraySchema
from .libtiledb import TileDBError


class FragmentInfo:
    """One fragment: ``uri``, ``timestamp_range``, ``cell_num``,
    ``sparse``/``dense``, ``nonempty_domain``, ``version``,
    ``array_schema_name``, ``has_consolidated_metadata``."""

    def __init__(self, uri, d, domain):
        self.uri = uri
        self.name = d["name"]
        self.timestamp_range = tuple(d["timestamp_range"])
        self.cell_num = d["cell_num"]
        self.sparse = bool(d["sparse"])
        self.dense = not self.sparse
        self.version = d["version"]
        self.array_schema_name = d["schema_name"]
        self.has_consolidated_metadata = bool(d["has_consolidated_metadata"])
        self.nonempty_domain = tuple(_bounds(r, dim) for r, dim in zip(d["nonempty_domain"], domain))

    def __repr__(self):
        fields = ("uri", "timestamp_range", "cell_num", "sparse", "nonempty_domain", "version")
        return "FragmentInfo(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in fields) + ")"

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{f}</td><td>{getattr(self, f)}</td></tr>"
                       for f in ("uri", "timestamp_range", "cell_num", "sparse", "nonempty_domain", "version"))
        return f"<table>{rows}</table>"


def _bounds(r, dim):
    lo, hi = r
    if dim.isvar:
        return (lo, hi)
    return (from_json(lo, dim.dtype), from_json(hi, dim.dtype))


class FragmentInfoList:
    """The fragments of the array at ``array_uri`` (as of ``timestamp``),
    indexable and iterable; each field also as a tuple over them."""

    def __init__(self, array_uri, include_mbrs=False, ctx=None, timestamp=None):
        try:
            native = open_native(array_uri, ctx, timestamp=timestamp)
        except TileDBError:
            raise
        self.array_uri = str(array_uri)
        schema = ArraySchema.from_json(native.schema_json())
        base = self.array_uri.rstrip("/")
        self._fragments = [FragmentInfo(f"{base}/__fragments/{d['name']}", d, schema.domain)
                           for d in json.loads(native.fragments_json())]
        self.to_vacuum = tuple(_to_vacuum(self.array_uri))

    def __len__(self):
        return len(self._fragments)

    def __iter__(self):
        return iter(self._fragments)

    def __getitem__(self, i):
        return self._fragments[i]

    def _each(self, field):
        return tuple(getattr(f, field) for f in self._fragments)

    @property
    def unconsolidated_metadata_num(self):
        return sum(1 for f in self._fragments if not f.has_consolidated_metadata)

    def __repr__(self):
        return "\n".join(repr(f) for f in self._fragments)

    def _repr_html_(self):
        return "<section>" + "".join(f._repr_html_() for f in self._fragments) + "</section>"


# Each fragment's field, as a tuple over the fragments.
for _field in ("uri", "cell_num", "sparse", "dense", "timestamp_range", "nonempty_domain", "version",
               "array_schema_name", "has_consolidated_metadata"):
    setattr(FragmentInfoList, _field, property(lambda self, f=_field: self._each(f)))


def _to_vacuum(uri):
    """The fragments consolidation left for a vacuum to remove: those the
    vacuum files (``__commits/*.vac``) name. Local arrays only."""
    path = local_path(uri)
    if path is None:
        return []
    commits = os.path.join(path, "__commits")
    out = []
    if os.path.isdir(commits):
        for name in sorted(os.listdir(commits)):
            if name.endswith(".vac"):
                with open(os.path.join(commits, name)) as f:
                    lines = [line.strip() for line in f if line.strip()]
                # From format 19 the lists are relative to the array.
                out += [uri.rstrip("/") + line if line.startswith("/") else line for line in lines]
    return out


def array_fragments(uri, include_mbrs=False, ctx=None):
    """The :class:`FragmentInfoList` of the array at ``uri``."""
    return FragmentInfoList(uri, include_mbrs=include_mbrs, ctx=ctx)
