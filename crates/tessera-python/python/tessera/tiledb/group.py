"""``Group``: TileDB groups as TileDB-Py opens them. Members added and
removed, and metadata set, while a group is open for writing are written
when it closes: one members change and one metadata file, as libtiledb
writes them."""

import os

from tessera import _native
from tessera._array import _options
from tessera._meta import metadata_dict

from .ctx import Config, Ctx, options_of
from .libtiledb import TileDBError
from .metadata import MetadataView, encode


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
        self._native = _errors(_native.open_group, self._uri, None, None, _options(options_of(self._ctx)))
        self._adds, self._removes, self._put, self._delete = [], [], {}, []
        self._isopen = True

    @staticmethod
    def create(uri, ctx=None):
        """Creates an empty group at ``uri``."""
        _errors(_native.create_group, str(uri), _options(options_of(ctx)))

    def open(self, mode="r"):
        self._open(mode)

    def close(self):
        if not self._isopen:
            return
        options = _options(options_of(self._ctx))
        if self._adds or self._removes:
            _errors(_native.change_members, self._uri, self._adds, self._removes, None, options)
        if self._put or self._delete:
            put = [(k, *v) for k, v in self._put.items()]
            _errors(_native.put_metadata, self._uri, put, self._delete, True, None, None, options)
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
        self._ctx = Ctx(cfg if isinstance(cfg, Config) else Config(cfg))

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
        return [Object(_kind(t), u, p) for p, t, u in self._native.members(False)]

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

        if "://" in self._uri and not self._uri.startswith("file://"):
            raise TileDBError("Group.delete: only local groups are deleted")
        path = self._uri.removeprefix("file://")
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
        return "\n".join(repr(m) for m in self._members())


def _kind(text):
    from .array import Array

    return Array if text == "array" else Group


class GroupMetadata(MetadataView):
    """A group's metadata; changes on a group open for writing are written
    when it closes."""

    def __init__(self, group):
        self._group = group

    def _entries(self):
        g = self._group
        out = metadata_dict(g._native.metadata())
        for k in g._delete:
            out.pop(k, None)
        return out

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        g = self._group
        if g._mode != "w":
            raise TileDBError("Group metadata is set on a group opened for writing")
        g._put[key] = encode(value)
        if key in g._delete:
            g._delete.remove(key)

    def __delitem__(self, key):
        g = self._group
        if g._mode not in ("w", "m"):
            raise TileDBError("Group metadata is deleted on a group opened for writing")
        g._put.pop(key, None)
        g._delete.append(key)
