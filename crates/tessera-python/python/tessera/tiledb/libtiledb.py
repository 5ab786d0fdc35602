"""What TileDB-Py keeps in ``tiledb.libtiledb``: the error type, and the
libtiledb release whose format and behaviour tessera follows."""

import enum

import tessera

# tessera writes format version 22, as libtiledb 2.30 does, and reads
# every version before it.
LIBTILEDB_RELEASE = (2, 30, 0)


class TileDBError(tessera.TesseraError):
    """An array, group, schema or query that could not be made or read
    (TileDB-Py's ``tiledb.TileDBError``; a ``tessera.TesseraError`` too)."""


def version():
    """The libtiledb release tessera follows, as ``(major, minor, patch)``."""
    return LIBTILEDB_RELEASE


# TileDB's datatypes by their codes in the format.
_DATATYPES = ["INT32", "INT64", "FLOAT32", "FLOAT64", "CHAR", "INT8", "UINT8", "INT16", "UINT16", "UINT32",
              "UINT64", "STRING_ASCII", "STRING_UTF8", "STRING_UTF16", "STRING_UTF32", "STRING_UCS2",
              "STRING_UCS4", "ANY"]
_DATATYPES += [f"DATETIME_{u}" for u in ("YEAR", "MONTH", "WEEK", "DAY", "HR", "MIN", "SEC", "MS", "US", "NS",
                                         "PS", "FS", "AS")]
_DATATYPES += [f"TIME_{u}" for u in ("HR", "MIN", "SEC", "MS", "US", "NS", "PS", "FS", "AS")]
_DATATYPES += ["BLOB", "BOOL", "GEOM_WKB", "GEOM_WKT"]
DataType = enum.IntEnum("DataType", [(name, code) for code, name in enumerate(_DATATYPES)])


class CurrentDomainType(enum.IntEnum):
    """The kinds of current domain (libtiledb has one)."""

    NDRECTANGLE = 0


def TILEDB_VAR_NUM():
    """The cell value count that marks variable-length cells."""
    return 4294967295


class _VersionHelper:
    """TileDB-Py's ``tiledb.version``: the API version tessera.tiledb
    follows, as text (``.version``) and called as a tuple."""

    version = "0.36.1"
    version_tuple = (0, 36, 1)

    def __call__(self):
        return self.version_tuple

    def __repr__(self):
        return f"VersionHelper(version={self.version!r}, version_tuple={self.version_tuple!r})"


api_version = _VersionHelper()
