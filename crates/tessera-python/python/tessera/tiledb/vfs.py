"""``VFS``: files and folders by URI, as TileDB-Py's VFS gives them, for
local paths (``file://`` or plain). Object store URIs are refused with a
:class:`TileDBError` naming the URI."""

import io
import os
import shutil

from .ctx import Config, Ctx, local_path
from .libtiledb import TileDBError


def _path(uri):
    uri = os.fspath(uri)
    if isinstance(uri, bytes):
        uri = uri.decode()
    path = local_path(uri)
    if path is None:
        raise TileDBError(f"VFS: {uri}: tessera.tiledb's VFS takes local paths only")
    return path


class VFS:
    """Local files and folders (see the module)."""

    def __init__(self, config=None, ctx=None):
        self._ctx = ctx or Ctx(config if config is None or isinstance(config, Config) else Config(config))

    def ctx(self):
        return self._ctx

    def config(self):
        return self._ctx.config()

    def supports(self, scheme):
        if scheme not in ("file", "s3", "azure", "gcs", "hdfs", "memfs"):
            raise ValueError(f"Unsupported VFS scheme '{scheme}://'")
        return scheme == "file"

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
        raise TileDBError(f"VFS: {uri}: buckets are not made by tessera.tiledb's VFS")

    def remove_bucket(self, uri):
        raise TileDBError(f"VFS: {uri}: buckets are not removed by tessera.tiledb's VFS")

    def is_bucket(self, uri):
        return False

    def empty_bucket(self, uri):
        raise TileDBError(f"VFS: {uri}: buckets are not emptied by tessera.tiledb's VFS")

    def is_empty_bucket(self, uri):
        raise TileDBError(f"VFS: {uri}: not a bucket")

    def create_dir(self, uri):
        os.makedirs(_path(uri), exist_ok=True)

    def isdir(self, uri):
        return self.is_dir(uri)

    def isfile(self, uri):
        return self.is_file(uri)

    def size(self, uri):
        return self.file_size(uri)

    def is_dir(self, uri):
        return os.path.isdir(_path(uri))

    def remove_dir(self, uri):
        path = _path(uri)
        if os.path.isdir(path):
            shutil.rmtree(path)

    def dir_size(self, uri):
        total = 0
        for root, _, files in os.walk(_path(uri)):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        return total

    def move_dir(self, old_uri, new_uri):
        os.rename(_path(old_uri), _path(new_uri))

    def copy_dir(self, old_uri, new_uri):
        shutil.copytree(_path(old_uri), _path(new_uri))

    def is_file(self, uri):
        return os.path.isfile(_path(uri))

    def remove_file(self, uri):
        try:
            os.remove(_path(uri))
        except OSError as e:
            raise TileDBError(f"VFS: cannot remove {uri}: {e}") from None

    def file_size(self, uri):
        try:
            return os.path.getsize(_path(uri))
        except OSError as e:
            raise TileDBError(f"VFS: {uri}: {e}") from None

    def move_file(self, old_uri, new_uri):
        os.rename(_path(old_uri), _path(new_uri))

    def copy_file(self, old_uri, new_uri):
        shutil.copyfile(_path(old_uri), _path(new_uri))

    def ls(self, uri, recursive=False):
        path = _path(uri)
        prefix = "file://" if str(uri).startswith("file://") else ""
        if recursive:
            out = []
            for root, dirs, files in os.walk(path):
                out += [prefix + os.path.join(root, n) for n in sorted(dirs + files)]
            return sorted(out)
        return sorted(prefix + os.path.join(path, n) for n in os.listdir(path))

    def ls_recursive(self, uri, callback=None):
        items = self.ls(uri, recursive=True)
        if callback is None:
            return items
        for item in items:
            if callback(item, 0 if self.is_dir(item) else self.file_size(item)) is False:
                break
        return None

    def touch(self, uri):
        with open(_path(uri), "ab"):
            pass

    def __getstate__(self):
        return {"config": self.config().dict()}

    def __setstate__(self, state):
        self._ctx = Ctx(Config(state["config"]))


class FileIO(io.RawIOBase):
    """A file opened through a :class:`VFS` (``"rb"``, ``"wb"`` or ``"ab"``)."""

    def __init__(self, vfs, uri, mode="rb"):
        if mode not in ("rb", "wb", "ab"):
            raise ValueError(f"invalid mode {mode!r}")
        self._vfs, self._mode = vfs, mode
        try:
            self._file = open(_path(uri), mode)
        except OSError as e:
            raise TileDBError(f"VFS: cannot open {uri}: {e}") from None

    def __len__(self):
        pos = self._file.tell()
        self._file.seek(0, 2)
        n = self._file.tell()
        self._file.seek(pos)
        return n

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
        return self._file.closed

    def close(self):
        self._file.close()

    def flush(self):
        self._file.flush()

    def seek(self, offset, whence=0):
        return self._file.seek(offset, whence)

    def tell(self):
        return self._file.tell()

    def read(self, size=-1):
        if not self.readable():
            raise IOError("Cannot read from write-only FileIO handle")
        return self._file.read(size)

    def readinto(self, buff):
        data = self.read(len(buff))
        buff[:len(data)] = data
        return len(data)

    def write(self, buff):
        if not self.writable():
            raise IOError("cannot write to read-only FileIO handle")
        return self._file.write(buff)
