"""The README's Python examples run, from the repository root."""

import os
import re

from conftest import REPO


def test_readme_examples_run():
    text = (REPO / "crates" / "tessera-python" / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for code in blocks:
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
