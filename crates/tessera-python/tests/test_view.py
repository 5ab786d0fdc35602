"""Pages of pictures from Python: ``A.view()`` and ``G.view()`` give the
page Jupyter shows inline, and its cell picture is the cells read."""

import base64
import re
import zlib

import numpy as np
import pytest

import tessera
from conftest import TESTDATA

DENSE = TESTDATA / "tiledb-0.36.1" / "dense_2d_types" / "array"
SPARSE = TESTDATA / "tiledb-0.36.1" / "random_sparse" / "array"
EXPERIMENT = TESTDATA / "soma" / "experiment_dense" / "experiment"


def cell_image(html):
    """The page's cell image as an (height, width, 4) array, and the img
    element's attributes."""
    tag = re.search(r'<img class="cell-image"[^>]*>', html).group(0)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
    png = base64.b64decode(attrs["src"].removeprefix("data:image/png;base64,"))
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    idat, pos = b"", 8
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        if png[pos + 4:pos + 8] == b"IDAT":
            idat += png[pos + 8:pos + 8 + n]
        pos += 12 + n
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + 4 * width)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, 4), attrs


def test_array_view_is_a_page_jupyter_shows():
    v = tessera.open(DENSE).view(attr="i32")
    assert isinstance(v, tessera.View)
    shown = v._repr_html_()
    assert shown.startswith('<div class="tessera-view"><style>')
    for section in ("schema", "fragments", "tiles", "cells"):
        assert f'<section class="{section}"' in shown
    assert v.html.startswith("<!DOCTYPE html>") and shown in v.html
    assert "<script" not in v.html


def test_sparse_density_is_where_the_cells_are(tmp_path):
    A = tessera.open(SPARSE)
    v = A.view()
    image, attrs = cell_image(v.html)
    t = A.read(attrs=[])
    x, y = t["x"].to_numpy(), t["y"].to_numpy()
    occupied = np.zeros(image.shape[:2], bool)
    occupied[x - int(float(attrs["data-y-lo"])), y - int(float(attrs["data-x-lo"]))] = True
    assert ((image[:, :, 3] == 255) == occupied).all()
    v.save(tmp_path / "page.html")
    assert (tmp_path / "page.html").read_text() == v.html


def test_dense_slice_orders_pixels_as_cells():
    A = tessera.open(DENSE)
    image, attrs = cell_image(A.view(attr="i32", subarray={"r": (1, 4)}).html)
    t = A.read(attrs=["i32"], subarray={"r": (1, 4)})
    r, c, v = (t[k].to_numpy() for k in ("r", "c", "i32"))
    assert image.shape[:2] == (4, 6)
    # Brightness (green channel, rising along viridis) orders as the values.
    g = image[r - 1, c - int(float(attrs["data-x-lo"])), 1].astype(int)
    order = np.argsort(v, kind="stable")
    assert (np.diff(g[order]) >= 0).all()


def test_group_view_lists_members():
    G = tessera.open_group(EXPERIMENT)
    html = G.view().html
    paths = re.findall(r'<li class="member" data-path="([^"]*)"', html)
    assert paths == [m.path for m in G.members(recursive=True)]
    assert 'data-kind="SOMADataFrame"' in html


def test_view_options_are_checked():
    with pytest.raises(tessera.TesseraError, match="attribute `nope`"):
        tessera.open(DENSE).view(attr="nope")
    with pytest.raises(tessera.TesseraError, match="positive"):
        tessera.open(DENSE).view(pixels=0)
