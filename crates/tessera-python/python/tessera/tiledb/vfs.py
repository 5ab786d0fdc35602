"""``VFS`` and ``FileIO``: files and folders by URI, as TileDB-Py's VFS
gives them, on local paths (``file://`` or plain) and on the object
stores tessera serves (``s3://``, ``gs://``/``gcs://``, ``az://``/
``azure://``), reached with the context's ``vfs.*`` keys. Object stores
have no folders: a folder is the objects under a prefix, made by writing
one; buckets are neither made nor removed here."""

import io
import os
import shutil

from tessera import _native

from ._open import errors
from .ctx import Config, Ctx, local_path, storage
from .libtiledb import TileDBError

# URI schemes as TileDB-Py names them, and as tessera's object stores do.
_SCHEMES = {"file": "file", "s3": "s3", "gcs": "gs", "gs": "gs", "azure": "az", "az": "az"}


def _uri(uri):
    uri = os.fspath(uri)
    return uri.decode() if isinstance(uri, bytes) else str(uri)


class _LocalFiles:
    """Files of the local filesystem."""

    def __init__(self, path):
        self.path = path

    def is_file(self):
        return os.path.isfile(self.path)

    def is_dir(self):
        return os.path.isdir(self.path)

    def list(self):
        return [(n, os.path.isdir(os.path.join(self.path, n))) for n in sorted(os.listdir(self.path))]

    def size(self):
        return os.path.getsize(self.path)

    def read(self, offset, n):
        with open(self.path, "rb") as f:
            f.seek(offset)
            return f.read(n)

    def put(self, data):
        with open(self.path, "wb") as f:
            f.write(data)

    def append(self, data):
        with open(self.path, "ab") as f:
            f.write(data)

    def remove_file(self):
        os.remove(self.path)

    def remove_dir(self):
        if os.path.isdir(self.path):
            shutil.rmtree(self.path)

    def create_dir(self):
        os.makedirs(self.path, exist_ok=True)


class _StoreFiles:
    """Objects of an object store (tessera's native storage)."""

    def __init__(self, uri, options):
        self.uri, self.options = uri.rstrip("/"), options

    def _call(self, fn, *args):
        return errors(fn, self.uri, *args, self.options)

    def is_file(self):
        return self._call(_native.files_is_object)

    def is_dir(self):
        try:
            return bool(self._call(_native.files_list))
        except TileDBError:
            return False

    def list(self):
        return sorted((name, is_dir) for name, is_dir, _ in self._call(_native.files_list))

    def size(self):
        return self._call(_native.files_size)

    def read(self, offset, n):
        return self._call(_native.files_read, offset, n)

    def put(self, data):
        self._call(_native.files_put, bytes(data))

    def remove_file(self):
        # A store deletes a missing object without complaint: asked first.
        if not self.is_file() or not self._call(_native.files_delete):
            raise FileNotFoundError(self.uri)

    def remove_dir(self):
        self._call(_native.files_delete_folder)

    def create_dir(self):
        # A prefix exists once an object is under it.
        pass


def _join(uri, name):
    return uri.rstrip("/") + "/" + name


class VFS:
    """Files and folders on local paths and object stores (see the module)."""

    def __init__(self, config=None, ctx=None):
        self._ctx = ctx or Ctx(config if config is None or isinstance(config, Config) else Config(config))

    def _files(self, uri):
        uri = _uri(uri)
        path = local_path(uri)
        if path is not None:
            return _LocalFiles(path)
        scheme = uri.split("://", 1)[0]
        if scheme not in _SCHEMES:
            raise TileDBError(f"VFS: {uri}: the scheme {scheme}:// is not served (file, s3, gcs, azure)")
        rest = uri.split("://", 1)[1]
        return _StoreFiles(f"{_SCHEMES[scheme]}://{rest}", storage(uri, self._ctx))

    def ctx(self):
        return self._ctx

    def config(self):
        return self._ctx.config()

    def supports(self, scheme):
        """Whether URIs of ``scheme`` are served (``file``, ``s3``,
        ``gcs``, ``azure``; not ``hdfs`` or ``memfs``)."""
        return scheme in _SCHEMES

    def open(self, uri, mode="rb"):
        return FileIO(self, uri, mode)

    def close(self, file):
        file.close()

    def write(self, file, buff):
        if isinstance(buff, str):
            buff = buff.encode()
        file.write(buff)

    def read(self, file, offset, nbytes):
        file.seek(offset)
        return file.read(nbytes)

    def create_bucket(self, uri):
        raise TileDBError(f"VFS: {uri}: buckets are made with the store's own tools, not tessera.tiledb's VFS")

    def remove_bucket(self, uri):
        raise TileDBError(f"VFS: {uri}: buckets are removed with the store's own tools, not tessera.tiledb's VFS")

    def is_bucket(self, uri):
        uri = _uri(uri)
        bare = "/" not in uri.split("://", 1)[-1].rstrip("/")
        if local_path(uri) is not None or not bare:
            return False
        try:
            self._files(uri).list()
            return True
        except TileDBError:
            return False

    def empty_bucket(self, uri):
        self._files(uri).remove_dir()

    def is_empty_bucket(self, uri):
        if not self.is_bucket(uri):
            raise TileDBError(f"VFS: {uri}: not a bucket")
        return not self._files(uri).list()

    def create_dir(self, uri):
        self._files(uri).create_dir()

    def isdir(self, uri):
        return self.is_dir(uri)

    def isfile(self, uri):
        return self.is_file(uri)

    def size(self, uri):
        return self.file_size(uri)

    def is_dir(self, uri):
        return self._files(uri).is_dir()

    def remove_dir(self, uri):
        self._files(uri).remove_dir()

    def dir_size(self, uri):
        return sum(self.file_size(item) for item in self.ls(uri, recursive=True) if not self.is_dir(item))

    def move_dir(self, old_uri, new_uri):
        old, new = self._files(old_uri), self._files(new_uri)
        if isinstance(old, _LocalFiles) and isinstance(new, _LocalFiles):
            os.rename(old.path, new.path)
            return
        self.copy_dir(old_uri, new_uri)
        old.remove_dir()

    def copy_dir(self, old_uri, new_uri):
        old, new = self._files(old_uri), self._files(new_uri)
        if isinstance(old, _LocalFiles) and isinstance(new, _LocalFiles):
            try:
                shutil.copytree(old.path, new.path)
            except OSError as e:
                raise TileDBError(f"VFS: cannot copy {old_uri} to {new_uri}: {e}") from None
            return
        if not old.is_dir():
            raise TileDBError(f"VFS: {old_uri}: not a folder")
        for name, is_dir in old.list():
            source, target = _join(_uri(old_uri), name), _join(_uri(new_uri), name)
            self.copy_dir(source, target) if is_dir else self.copy_file(source, target)

    def is_file(self, uri):
        return self._files(uri).is_file()

    def remove_file(self, uri):
        try:
            self._files(uri).remove_file()
        except OSError as e:
            raise TileDBError(f"VFS: cannot remove {uri}: {e}") from None

    def file_size(self, uri):
        try:
            return self._files(uri).size()
        except OSError as e:
            raise TileDBError(f"VFS: {uri}: {e}") from None

    def move_file(self, old_uri, new_uri):
        old, new = self._files(old_uri), self._files(new_uri)
        if isinstance(old, _LocalFiles) and isinstance(new, _LocalFiles):
            os.rename(old.path, new.path)
            return
        self.copy_file(old_uri, new_uri)
        old.remove_file()

    def copy_file(self, old_uri, new_uri):
        old = self._files(old_uri)
        try:
            self._files(new_uri).put(old.read(0, old.size()))
        except OSError as e:
            raise TileDBError(f"VFS: cannot copy {old_uri} to {new_uri}: {e}") from None

    def ls(self, uri, recursive=False):
        """The entries under ``uri`` as URIs, sorted (all levels with
        ``recursive``)."""
        uri = _uri(uri)
        files = self._files(uri)
        plain = isinstance(files, _LocalFiles) and not uri.startswith("file://")
        try:
            entries = files.list()
        except OSError as e:
            raise TileDBError(f"VFS: cannot list {uri}: {e}") from None
        out = []
        for name, is_dir in entries:
            item = os.path.join(files.path, name) if plain else _join(uri, name)
            out.append(item)
            if recursive and is_dir:
                out += self.ls(item, recursive=True)
        return sorted(out)

    def ls_recursive(self, uri, callback=None):
        items = self.ls(uri, recursive=True)
        if callback is None:
            return items
        for item in items:
            if callback(item, 0 if self.is_dir(item) else self.file_size(item)) is False:
                break
        return None

    def touch(self, uri):
        files = self._files(uri)
        if not files.is_file():
            try:
                files.put(b"")
            except OSError as e:
                raise TileDBError(f"VFS: cannot touch {uri}: {e}") from None

    def __getstate__(self):
        return {"config": self.config().dict()}

    def __setstate__(self, state):
        self._ctx = Ctx(Config(state["config"]))


class FileIO(io.RawIOBase):
    """A file opened through a :class:`VFS`: ``"rb"`` reads ranges,
    ``"wb"`` writes anew and ``"ab"`` appends. Local files take each
    write at once; an object is written whole when flushed or closed
    (appending to one rewrites it)."""

    def __init__(self, vfs, uri, mode="rb"):
        if mode not in ("rb", "wb", "ab"):
            raise ValueError(f"invalid mode {mode!r}")
        self._vfs, self._mode, self._uri = vfs, mode, _uri(uri)
        self._files = vfs._files(uri)
        self._pos = 0
        self._closed = False
        # Bytes written and not yet on the storage (objects: all of them).
        self._pending = bytearray()
        try:
            if mode == "rb":
                self._size = self._files.size()
            elif mode == "wb":
                self._files.put(b"")
                self._size = 0
            else:
                self._size = self._files.size() if self._files.is_file() else 0
                self._pos = self._size
                if self._size and not isinstance(self._files, _LocalFiles):
                    # An object is written whole: what it holds, then more.
                    self._pending += self._files.read(0, self._size)
        except OSError as e:
            raise TileDBError(f"VFS: cannot open {uri}: {e}") from None
        self._local = isinstance(self._files, _LocalFiles)

    def __len__(self):
        return self._size

    @property
    def mode(self):
        return self._mode

    def readable(self):
        return self._mode == "rb"

    def writable(self):
        return self._mode != "rb"

    def seekable(self):
        return self._mode == "rb"

    @property
    def closed(self):
        return self._closed

    def close(self):
        if not self._closed:
            self.flush()
            self._closed = True

    def flush(self):
        if self._mode == "rb" or self._closed:
            return
        if self._local:
            if self._pending:
                self._files.append(bytes(self._pending))
                self._pending.clear()
        else:
            self._files.put(bytes(self._pending))

    def seek(self, offset, whence=0):
        offset = int(offset)
        if whence == 0:
            if offset < 0:
                raise ValueError("offset must be a positive or zero value when SEEK_SET")
            pos = offset
        elif whence == 1:
            pos = self._pos + offset
        elif whence == 2:
            pos = self._size + offset
        else:
            raise ValueError("whence must be 0, 1 or 2")
        self._pos = max(0, pos)
        return self._pos

    def tell(self):
        return self._pos

    def read(self, size=-1):
        if not self.readable():
            raise IOError("Cannot read from write-only FileIO handle")
        size = self._size - self._pos if size is None or int(size) < 0 else int(size)
        size = max(0, min(size, self._size - self._pos))
        if size == 0:
            return b""
        data = self._files.read(self._pos, size)
        self._pos += len(data)
        return bytes(data)

    def readall(self):
        return self.read(-1)

    def readinto(self, buff):
        view = memoryview(buff).cast("B")
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)

    def write(self, buff):
        if not self.writable():
            raise IOError("cannot write to read-only FileIO handle")
        data = bytes(buff)
        self._pending += data
        self._pos += len(data)
        self._size += len(data)
        if self._local:
            # Local writes reach the file at once, as libtiledb's do.
            self.flush()
        return len(data)
