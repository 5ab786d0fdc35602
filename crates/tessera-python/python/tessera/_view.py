"""Pages of pictures: ``A.view()`` and ``G.view()``."""


class View:
    """A page of pictures of an array or a group: its schema, fragments
    over time and over the domain, the tile grid and the cells. Jupyter
    shows it inline; :meth:`save` writes it as one self-contained HTML
    file (no script, nothing from the network)."""

    def __init__(self, fragment, document):
        self._fragment = fragment
        self._document = document

    def _repr_html_(self):
        return self._fragment

    @property
    def html(self):
        """The whole HTML document."""
        return self._document

    def save(self, path):
        """Writes the page to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self._document)

    def __str__(self):
        return self._document

    def __repr__(self):
        return f"tessera.View({len(self._document)} bytes of HTML)"


def view_options(attr, subarray, dims, budget, pixels):
    """The argument of the native ``view``: ``(attr, subarray, dims,
    budget, pixels)``, a subarray as ``(dimension, low, high)`` text, the
    first range of each dimension."""
    ranges = None
    if subarray:
        ranges = []
        for name, r in subarray.items():
            lo, hi = r[0] if isinstance(r, list) else r
            ranges.append((name, str(lo), str(hi)))
    return (attr, ranges, list(dims) if dims else None, int(budget), int(pixels))
