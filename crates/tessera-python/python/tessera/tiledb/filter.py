"""Filters and filter lists, as TileDB-Py names them, over the schema's
JSON form (``docs/SCHEMA_JSON.md``): each filter class knows its JSON
name and options, and :meth:`Filter.from_json` gives the class back."""

import numpy as np

from .datatypes import DataType, tiledb_name


class Filter:
    """One filter of a pipeline. Subclasses set ``_name`` (the JSON name)
    and ``_options`` (attribute -> JSON option, with defaults)."""

    _name = None
    _options = {}

    def __init__(self, ctx=None, **options):
        self._ctx = ctx
        for attr, (_, default) in self._options.items():
            setattr(self, "_" + attr, options.get(attr, default))

    @property
    def filter_name(self):
        """libtiledb's name of the filter (``ZSTD``, ``SCALE_FLOAT``)."""
        return self._name.upper()

    def _args(self):
        """The constructor's arguments that make this filter again."""
        return {a: getattr(self, "_" + a) for a in self._options}

    def to_json(self):
        out = {"name": self._name}
        for attr, (key, default) in self._options.items():
            value = getattr(self, "_" + attr)
            if value != default and value is not None:
                out[key] = value
        return out

    @staticmethod
    def from_json(d):
        d = dict(d)
        cls = _BY_NAME.get(d.pop("name"))
        if cls is None:
            raise ValueError(f"unknown filter {d}")
        options = {attr: d[key] for attr, (key, _) in cls._options.items() if key in d}
        return cls._from_options(options)

    @classmethod
    def _from_options(cls, options):
        return cls(**options)

    def __eq__(self, other):
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self):
        return hash(str(self.to_json()))

    def __repr__(self):
        args = ", ".join(f"{a}={v!r}" for a, v in self._args().items())
        return f"{type(self).__name__}({args})"

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{a}</td><td>{v}</td></tr>" for a, v in self._args().items())
        return f"<section><table><tr><th>{type(self).__name__}</th></tr>{rows}</table></section>"


class CompressionFilter(Filter):
    """A compressor, with its ``level`` (-1: the codec's default)."""

    _options = {"level": ("level", -1)}

    def __init__(self, level=-1, ctx=None):
        if not isinstance(level, int) or isinstance(level, bool):
            raise TypeError(f"level must be an int, not {type(level).__name__}")
        super().__init__(ctx, level=level)

    @property
    def level(self):
        return self._level


class NoOpFilter(Filter):
    _name = "none"

    def __init__(self, ctx=None):
        super().__init__(ctx)


class GzipFilter(CompressionFilter):
    _name = "gzip"


class ZstdFilter(CompressionFilter):
    _name = "zstd"


class LZ4Filter(CompressionFilter):
    _name = "lz4"


class Bzip2Filter(CompressionFilter):
    _name = "bzip2"


class RleFilter(CompressionFilter):
    _name = "rle"


class DictionaryFilter(CompressionFilter):
    _name = "dictionary"


class _Reinterpreting(CompressionFilter):
    """Delta filters: a ``reinterp_dtype`` the values are read as."""

    _options = {"level": ("level", -1), "reinterp": ("reinterpret_type", None)}

    def __init__(self, level=-1, reinterp_dtype=None, ctx=None):
        super().__init__(level, ctx)
        if reinterp_dtype is None:
            self._reinterp = None
        elif hasattr(reinterp_dtype, "name") and not isinstance(reinterp_dtype, np.dtype):
            self._reinterp = tiledb_name(reinterp_dtype)
        else:
            self._reinterp = DataType.from_numpy(reinterp_dtype).tiledb_type

    @classmethod
    def _from_options(cls, options):
        name = options.get("reinterp")
        dtype = None if name in (None, "ANY") else DataType.from_tiledb(tiledb_name(name)).np_dtype
        return cls(options.get("level", -1), dtype)

    @property
    def reinterp_dtype(self):
        if self._reinterp in (None, "ANY"):
            return None
        return DataType.from_tiledb(self._reinterp).np_dtype

    def _args(self):
        dtype = self.reinterp_dtype
        return {"level": self._level, "reinterp_dtype": None if dtype is None else dtype.name}


class DeltaFilter(_Reinterpreting):
    _name = "delta"


class DoubleDeltaFilter(_Reinterpreting):
    _name = "double_delta"


class BitShuffleFilter(Filter):
    _name = "bitshuffle"

    def __init__(self, ctx=None):
        super().__init__(ctx)


class ByteShuffleFilter(Filter):
    _name = "byteshuffle"

    def __init__(self, ctx=None):
        super().__init__(ctx)


class XORFilter(Filter):
    _name = "xor"

    def __init__(self, ctx=None):
        super().__init__(ctx)


class ChecksumMD5Filter(Filter):
    _name = "checksum_md5"

    def __init__(self, ctx=None):
        super().__init__(ctx)


class ChecksumSHA256Filter(Filter):
    _name = "checksum_sha256"

    def __init__(self, ctx=None):
        super().__init__(ctx)


class _Windowed(Filter):
    """A filter over windows of values: ``window`` (-1: the default)."""

    def __init__(self, window=-1, ctx=None):
        if not isinstance(window, (int, np.integer)) or isinstance(window, bool):
            raise TypeError(f"window must be an int, not {type(window).__name__}")
        default = self._options["window"][1]
        super().__init__(ctx, window=default if window == -1 else int(window))

    @property
    def window(self):
        return self._window


class BitWidthReductionFilter(_Windowed):
    _name = "bit_width_reduction"
    _options = {"window": ("max_window", 256)}


class PositiveDeltaFilter(_Windowed):
    _name = "positive_delta"
    _options = {"window": ("max_window", 1024)}


class FloatScaleFilter(Filter):
    _name = "scale_float"
    _options = {"factor": ("scale", 1.0), "offset": ("offset", 0.0), "bytewidth": ("byte_width", 8)}

    def __init__(self, factor=None, offset=None, bytewidth=None, ctx=None):
        super().__init__(ctx, factor=1.0 if factor is None else float(factor),
                         offset=0.0 if offset is None else float(offset),
                         bytewidth=8 if bytewidth is None else int(bytewidth))

    @property
    def factor(self):
        return self._factor

    @property
    def offset(self):
        return self._offset

    @property
    def bytewidth(self):
        return self._bytewidth

    def dump(self):
        print(f"FloatScaleFilter(factor={self._factor}, offset={self._offset}, bytewidth={self._bytewidth})")


class WebpFilter(Filter):
    _name = "webp"
    _options = {"quality": ("quality", 100.0), "input_format": ("format", 0), "lossless": ("lossless", False)}
    # TileDB-Py's names of the WebP input formats.
    FORMATS = {"NONE": 0, "RGB": 1, "BGR": 2, "RGBA": 3, "BGRA": 4}

    def __init__(self, input_format=None, quality=None, lossless=None, ctx=None):
        fmt = 0 if input_format is None else input_format
        if isinstance(fmt, str):
            fmt = self.FORMATS[fmt.upper().removeprefix("WEBP_")]
        super().__init__(ctx, quality=100.0 if quality is None else float(quality), input_format=int(fmt),
                         lossless=bool(lossless))

    @property
    def input_format(self):
        return self._input_format

    @property
    def quality(self):
        return self._quality

    @property
    def lossless(self):
        return self._lossless


_BY_NAME = {c._name: c for c in (NoOpFilter, GzipFilter, ZstdFilter, LZ4Filter, Bzip2Filter, RleFilter,
                                 DictionaryFilter, DeltaFilter, DoubleDeltaFilter, BitShuffleFilter,
                                 ByteShuffleFilter, XORFilter, ChecksumMD5Filter, ChecksumSHA256Filter,
                                 BitWidthReductionFilter, PositiveDeltaFilter, FloatScaleFilter, WebpFilter)}
DEFAULT_CHUNKSIZE = 65536


class FilterList:
    """An ordered pipeline of filters and its chunk size (bytes)."""

    def __init__(self, filters=None, chunksize=None, ctx=None):
        self._filters = []
        self._chunksize = chunksize
        for f in filters or ():
            self.append(f)

    @property
    def chunksize(self):
        return DEFAULT_CHUNKSIZE if self._chunksize is None else self._chunksize

    @property
    def nfilters(self):
        return len(self._filters)

    def append(self, filter):
        if not isinstance(filter, Filter):
            raise ValueError("filter argument must be a TileDB filter objects")
        self._filters.append(filter)

    def __len__(self):
        return len(self._filters)

    def __iter__(self):
        return iter(self._filters)

    def __contains__(self, filter):
        return filter in self._filters

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._filters[i] for i in range(*index.indices(len(self._filters)))]
        if not isinstance(index, (int, np.integer)):
            raise TypeError("FilterList indices must be integers or slices")
        if index < 0:
            index += len(self._filters)
        if not 0 <= index < len(self._filters):
            raise IndexError("FilterList index out of range")
        return self._filters[index]

    def __eq__(self, other):
        if other is None:
            return False
        if not isinstance(other, FilterList):
            # A plain sequence of filters: the filters alone are compared.
            try:
                return self._filters == FilterList(other)._filters
            except (TypeError, ValueError):
                return False
        return self._filters == other._filters and self.chunksize == other.chunksize

    def __repr__(self):
        return "FilterList([" + ", ".join(repr(f) for f in self._filters) + "])"

    def _repr_html_(self):
        return "<section>" + "".join(f._repr_html_() for f in self._filters) + "</section>"

    def to_json(self):
        filters = [f.to_json() for f in self._filters]
        if self._chunksize is not None and self._chunksize != DEFAULT_CHUNKSIZE:
            return {"max_chunk_size": self._chunksize, "filters": filters}
        return filters

    @staticmethod
    def from_json(d):
        if isinstance(d, dict):
            return FilterList([Filter.from_json(f) for f in d.get("filters", [])], chunksize=d.get("max_chunk_size"))
        return FilterList([Filter.from_json(f) for f in d or []])


def filter_list(filters):
    """``filters`` (a FilterList, a list of filters, or None) as a FilterList."""
    if filters is None:
        return FilterList()
    if isinstance(filters, FilterList):
        return filters
    if isinstance(filters, Filter):
        return FilterList([filters])
    return FilterList(filters)
