"""What TileDB-Py's C++ core module (``tiledb.main``) gives that its own
tests call: ``PyFragmentInfo``, fragment info by index."""

from .fragment import FragmentInfoList
from .libtiledb import TileDBError
from .stats import python_internal_stats  # noqa: F401 (TileDB-Py's tiledb.main has it)


class PyFragmentInfo:
    """Fragment info of the array at ``uri``, a field at a time by index
    (``get_cell_num(i)``, or every fragment's as a tuple without ``i``)."""

    def __init__(self, uri, schema=None, include_mbrs=False, ctx=None):
        self._list = FragmentInfoList(uri, include_mbrs, ctx)

    def get_num_fragments(self):
        return len(self._list)

    def _field(self, name, i):
        values = tuple(getattr(f, name) for f in self._list)
        return values if i is None else values[i]

    def get_to_vacuum(self, i=None):
        return self._list.to_vacuum if i is None else self._list.to_vacuum[i]

    def get_unconsolidated_metadata_num(self):
        return self._list.unconsolidated_metadata_num

    def get_mbrs(self):
        if not self._list._include_mbrs:
            raise TileDBError("PyFragmentInfo: made without include_mbrs: no MBRs were read")
        return self._list.mbrs

    def dump(self):
        """The fragments described, as text: their number, then each."""
        lines = [f"- Fragment num: {len(self._list)}"]
        for i, f in enumerate(self._list, 1):
            lines += [f"- Fragment #{i}:", f"  > URI: {f.uri}", f"  > Timestamp range: {f.timestamp_range}",
                      f"  > Cell num: {f.cell_num}", f"  > Non-empty domain: {f.nonempty_domain}"]
        return "\n".join(lines) + "\n"


# get_<field>(i): one fragment's field, or every fragment's without i.
for _field in ("uri", "version", "timestamp_range", "sparse", "dense", "cell_num", "nonempty_domain",
               "has_consolidated_metadata", "array_schema_name"):
    setattr(PyFragmentInfo, f"get_{_field}", lambda self, i=None, f=_field: self._field(f, i))
