"""``Group``: TileDB groups as TileDB-Py opens them. Members added and
removed, and metadata set, while a group is open for writing are written
when it closes: one members change and one metadata file, as libtiledb
writes them."""

import os

from tessera import _native

from .ctx import Config, Ctx, default_ctx, local_path, storage
from .libtiledb import TileDBError
from .metadata import _NP_DATA, _NP_SHAPE, MetadataView, stored


class Object:
    """A member: its ``type`` (``Array`` or ``Group``), ``uri`` and ``name``."""

    def __init__(self, type, uri, name=None):
        self.type, self.uri, self.name = type, uri, name

    def __repr__(self):
        kind = "ARRAY" if self.type.__name__ == "Array" else "GROUP"
        return f"{self.name or ''} {kind} {self.uri}"


def _errors(call, *args):
    try:
        return call(*args)
    except TileDBError:
        raise
    except Exception as e:
        raise TileDBError(str(e)) from None


class Group:
    """A group at ``uri`` opened in ``mode`` ``"r"``, ``"w"`` or ``"m"``."""

    def __init__(self, uri, mode="r", config=None, ctx=None):
        self._uri = str(uri)
        self._ctx = ctx if config is None else Ctx(config if isinstance(config, Config) else Config(config))
        self._open(mode)

    def _open(self, mode):
        if mode not in ("r", "w", "m"):
            raise ValueError(f"invalid mode {mode!r}")
        self._mode = mode
        self._native = _errors(_native.open_group, self._uri, self._timestamp(), None,
                               storage(self._uri, self._ctx))
        self._adds, self._removes, self._put, self._delete = [], [], {}, []
        self._meta_entries = None
        self._isopen = True

    def _timestamp(self):
        """``sm.group.timestamp_end`` of the group's context: what it reads
        up to and writes at."""
        config = (self._ctx or default_ctx()).config()
        end = config.get("sm.group.timestamp_end", raise_keyerror=False)
        return int(end) if end not in (None, "", str((1 << 64) - 1)) else None

    @staticmethod
    def create(uri, ctx=None):
        """Creates an empty group at ``uri``."""
        _errors(_native.create_group, str(uri), storage(uri, ctx))

    def open(self, mode="r"):
        self._open(mode)

    def close(self):
        if not self._isopen:
            return
        options = storage(self._uri, self._ctx)
        at = self._timestamp()
        if self._adds or self._removes:
            _errors(_native.change_members, self._uri, self._adds, self._removes, None, options, at)
        if self._put or self._delete:
            put = [(k, *v) for k, v in self._put.items()]
            _errors(_native.put_metadata, self._uri, put, self._delete, True, at, None, options)
        self._adds, self._removes, self._put, self._delete = [], [], {}, []
        self._isopen = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def uri(self):
        return self._uri

    @property
    def mode(self):
        return self._mode

    @property
    def isopen(self):
        return self._isopen

    def set_config(self, cfg):
        if self._isopen:
            raise ValueError("Cannot set config on an open group: close it first")
        self._ctx = Ctx(cfg if isinstance(cfg, Config) else Config(cfg))

    @staticmethod
    def consolidate_metadata(uri, config=None, ctx=None):
        """Consolidates the group's metadata files into one."""
        _errors(_native.consolidate, str(uri), "group_meta", None, None, False, None, None,
                storage(uri, ctx if config is None else config if isinstance(config, Config) else Config(config)))

    @staticmethod
    def vacuum_metadata(uri, config=None, ctx=None):
        """Removes the metadata files a consolidation replaced."""
        _errors(_native.vacuum, str(uri), "group_meta", None,
                storage(uri, ctx if config is None else config if isinstance(config, Config) else Config(config)))

    def is_relative(self, name):
        """Whether member ``name``'s URI is stored relative to the group."""
        self._check("r")
        for entry_name, _, relative, _ in self._native.member_entries():
            if entry_name == name:
                return bool(relative)
        raise TileDBError(f"{self._uri}: no member named {name!r}")

    def _check(self, mode):
        if not self._isopen:
            raise TileDBError("Group is not open")
        if mode == "w" and self._mode != "w":
            raise TileDBError("Group is not opened for writing")

    def add(self, uri, name=None, relative=False, type=None):
        self._check("w")
        self._adds.append((str(uri), name or "", bool(relative)))

    def remove(self, member):
        self._check("w")
        self._removes.append(str(member))

    def _members(self):
        self._check("r")
        out = []
        for name, uri, relative, kind in self._native.member_entries():
            if relative:
                uri = self._uri.rstrip("/") + "/" + uri
            out.append(Object(_kind(kind), uri, name))
        return out

    def __delitem__(self, member):
        self.remove(member)

    def __iter__(self):
        return iter(self._members())

    def __len__(self):
        return len(self._members())

    def __contains__(self, name):
        return any(m.name == name for m in self._members())

    def has_member(self, name):
        return name in self

    def __getitem__(self, member):
        members = self._members()
        if isinstance(member, int):
            return members[member]
        for m in members:
            if m.name == member or m.uri == member:
                return m
        raise KeyError(member)

    @property
    def meta(self):
        return GroupMetadata(self)

    def delete(self, recursive=False):
        import shutil

        path = local_path(self._uri)
        if path is None:
            raise TileDBError("Group.delete: only local groups are deleted")
        if recursive:
            shutil.rmtree(path)
        else:
            for name in ("__group", "__meta", "__tiledb_group.tdb"):
                target = os.path.join(path, name)
                if os.path.isdir(target):
                    shutil.rmtree(target)
                elif os.path.exists(target):
                    os.remove(target)
        self._isopen = False

    def __repr__(self):
        return self._dump(True)

    def _dump(self, recursive, depth=0):
        """The tree libtiledb's group dump draws: the group, then each
        member as ``|-- name TYPE`` (member groups' members below them)."""
        lines = [f"{os.path.basename(self._uri.rstrip('/'))} GROUP"] if depth == 0 else []
        for m in self._members():
            kind = "ARRAY" if m.type.__name__ == "Array" else "GROUP"
            lines.append(f"{'|   ' * depth}|-- {m.name or os.path.basename(m.uri.rstrip('/'))} {kind}")
            if recursive and kind == "GROUP" and depth < 16:
                with Group(m.uri, ctx=self._ctx) as sub:
                    lines.extend(sub._dump(True, depth + 1).splitlines())
        return "\n".join(lines)


def _kind(text):
    from .array import Array

    return Array if text == "array" else Group


class GroupMetadata(MetadataView):
    """A group's metadata; changes on a group open for writing are written
    when it closes."""

    def __init__(self, group):
        self._group = group

    def _kind(self):
        return "Group"

    def _owner(self):
        return self._group

    def _triples(self):
        return self._group._native.metadata()

    def _entries(self):
        g = self._group
        g._check("r")
        return {k: v for k, v in super()._entries().items() if k not in g._delete}

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        g = self._group
        g._check("r")
        if g._mode != "w":
            raise TileDBError("Group metadata is set on a group opened for writing")
        puts, deletes = stored(key, value)
        for k, *v in puts:
            g._put[k] = tuple(v)
            if k in g._delete:
                g._delete.remove(k)
        for k in deletes:
            g._put.pop(k, None)
            if k not in g._delete:
                g._delete.append(k)

    def update(self, other=(), **kwargs):
        for k, v in dict(other, **kwargs).items():
            self[k] = v

    def __delitem__(self, key):
        g = self._group
        if g._mode not in ("w", "m"):
            raise TileDBError("Group metadata is deleted on a group opened for writing")
        for k in (key, _NP_DATA + key, _NP_SHAPE + key):
            g._put.pop(k, None)
            if k not in g._delete:
                g._delete.append(k)
