"""Fragment info as TileDB-Py gives it: ``tiledb.array_fragments(uri)``,
a :class:`FragmentInfoList` of :class:`FragmentInfo`, from the fragments
tessera lists for the array (consolidated-away ones hidden, as
libtiledb's fragment info hides them)."""

import json
import os
import shutil

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
        self._mbrs = None

    @property
    def mbrs(self):
        """The MBR of each data tile (per dimension ``(lo, hi)``), where
        the list was made with ``include_mbrs=True``."""
        if self._mbrs is None:
            raise AttributeError("retrieving minimum bounding rectangles is disabled; "
                                 "use array_fragments(uri, include_mbrs=True)")
        return self._mbrs

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
        self._include_mbrs = include_mbrs
        if include_mbrs:
            for f, leaves in zip(self._fragments, json.loads(native.fragment_mbrs_json())):
                f._mbrs = tuple(tuple(_bounds(r, dim) for r, dim in zip(mbr, schema.domain)) for mbr in leaves)

    def __len__(self):
        return len(self._fragments)

    def __iter__(self):
        return iter(self._fragments)

    def __getitem__(self, i):
        return self._fragments[i]

    def _each(self, field):
        return tuple(getattr(f, field) for f in self._fragments)

    @property
    def mbrs(self):
        if not self._include_mbrs:
            raise AttributeError("retrieving minimum bounding rectangles is disabled; "
                                 "use array_fragments(uri, include_mbrs=True)")
        return self._each("mbrs")

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


def _copy_fragments(src_uri, dst_uri, timestamp_range):
    """Copies the fragments of ``src_uri`` written within
    ``timestamp_range`` (inclusive) into the array folder ``dst_uri``:
    each folder first, its commit last, so a reader sees a fragment whole
    or not at all. Local arrays only."""
    if not isinstance(timestamp_range, tuple) or len(timestamp_range) != 2:
        raise TypeError("'timestamp_range' argument expects tuple(start: int, end: int)")
    src, dst = local_path(src_uri), local_path(dst_uri)
    if src is None or dst is None:
        raise TileDBError("fragments are copied between local arrays only")
    lo, hi = timestamp_range
    for frag in FragmentInfoList(src_uri):
        if not (lo <= frag.timestamp_range[0] and frag.timestamp_range[1] <= hi):
            continue
        name = os.path.basename(frag.uri)
        if frag.version < 12:
            raise TileDBError(f"fragment {name}: fragments of formats before 12 are not copied")
        os.makedirs(os.path.join(dst, "__fragments"), exist_ok=True)
        os.makedirs(os.path.join(dst, "__commits"), exist_ok=True)
        target = os.path.join(dst, "__fragments", name)
        if os.path.exists(target):
            continue
        shutil.copytree(os.path.join(src, "__fragments", name), target)
        commit = os.path.join("__commits", f"{name}.wrt")
        shutil.copyfile(os.path.join(src, commit), os.path.join(dst, commit) + ".tmp")
        os.replace(os.path.join(dst, commit) + ".tmp", os.path.join(dst, commit))


def _schema_files(path):
    schema_dir = os.path.join(path, "__schema")
    if not os.path.isdir(schema_dir):
        return []
    return sorted(n for n in os.listdir(schema_dir) if n != "__enumerations")


def create_array_from_fragments(src_uri, dst_uri, timestamp_range, config=None, ctx=None, verbose=False,
                                dry_run=False):
    """A new array at ``dst_uri`` holding the fragments of ``src_uri``
    written within ``timestamp_range`` (inclusive), with the schemas and
    enumerations they were written with. Local arrays only."""
    src, dst = local_path(src_uri), local_path(dst_uri)
    if src is None or dst is None:
        raise TileDBError("create_array_from_fragments: local arrays only")
    if os.path.exists(os.path.join(dst, "__schema")):
        raise TileDBError(f"Array URI `{dst_uri}` already exists")
    if dry_run:
        return
    # Built beside its destination and renamed into place: never half made.
    staging = os.path.join(os.path.dirname(os.path.abspath(dst)), f".{os.path.basename(dst)}.tessera-copy")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    try:
        for folder in ("__fragments", "__commits", "__fragment_meta", "__meta"):
            os.makedirs(os.path.join(staging, folder))
        shutil.copytree(os.path.join(src, "__schema"), os.path.join(staging, "__schema"))
        _copy_fragments(src_uri, staging, timestamp_range)
        if os.path.isdir(dst) and not os.listdir(dst):
            os.rmdir(dst)
        os.rename(staging, dst)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def copy_fragments_to_existing_array(src_uri, dst_uri, timestamp_range, config=None, ctx=None, verbose=False,
                                     dry_run=False):
    """Copies the fragments of ``src_uri`` written within
    ``timestamp_range`` (inclusive) into the array at ``dst_uri``, whose
    one schema must be the source's one schema. Local arrays only."""
    src, dst = local_path(src_uri), local_path(dst_uri)
    if src is None or dst is None:
        raise TileDBError("copy_fragments_to_existing_array: local arrays only")
    if not os.path.isdir(os.path.join(dst, "__schema")):
        raise TileDBError(f"Array URI `{dst_uri}` does not exist")
    if len(_schema_files(src)) != 1 or len(_schema_files(dst)) != 1:
        raise TileDBError("Multiple evolved schemas detected. There can only be one schema version present in "
                          "both the source and destination arrays and both must be identical")
    if ArraySchema.load(src_uri) != ArraySchema.load(dst_uri):
        raise TileDBError("The source and destination array must have matching schemas.")
    if dry_run:
        return
    name = _schema_files(src)[0]
    if not os.path.exists(os.path.join(dst, "__schema", name)):
        shutil.copyfile(os.path.join(src, "__schema", name), os.path.join(dst, "__schema", name))
    _copy_fragments(src_uri, dst_uri, timestamp_range)
