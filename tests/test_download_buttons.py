"""Every download button goes through ``ui.downloads.download_button``, whose click reruns nothing.

A click that reruns the page races its own deferred download (see ``ui/downloads.py``); the AppTest
reader (``download`` in ``tests/apptest_support.py``) checks the buttons the page tests read, and
this check keeps a new page from calling Streamlit's button directly.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = ROOT / "ui" / "downloads.py"


def direct_calls(source: str) -> list[int]:
    """Lines that call ``<anything>.download_button(...)``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "download_button"
    ]


@pytest.mark.parametrize(
    "path",
    sorted(p for p in [*ROOT.glob("views/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"] if p != ALLOWED),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_page_calls_streamlits_download_button_itself(path: Path) -> None:
    lines = direct_calls(path.read_text(encoding="utf-8"))
    assert not lines, f"{path.relative_to(ROOT)} lines {lines}: use ui.downloads.download_button"


def test_the_check_finds_a_direct_call_in_a_column_and_on_the_page() -> None:
    source = "c1.download_button('a', b'x', key='k')\nst.download_button('b', b'y')\ndownload_button('c', b'z')\n"
    assert direct_calls(source) == [1, 2]
    assert direct_calls(ALLOWED.read_text(encoding="utf-8")), "the helper itself calls Streamlit's button"
