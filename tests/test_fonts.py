"""The bundled fonts (issue 36, point 1): what ``.streamlit/config.toml`` serves is what
``scoring/core/fonts.py`` lists, every file is there with its license, and the model x language
picture (PNG through kaleido's Chromium) draws Tamil, Devanagari and Bengali labels on a machine
whose system has no Indic font (``glyphs.latin_only_fontconfig``), instead of boxes, and sends
none of the requests that Chromium makes by itself to another host.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import glyphs
import plotly.graph_objects as go
import pytest
from PIL import Image

from scoring.core import fonts
from scoring.team_report import ESTIMATE, TableCell, table_figure, table_picture, write_picture

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".streamlit" / "config.toml"
#: Labels of the picture: the issue's Tamil question words, a Devanagari conjunct, Bengali.
LABELS = ("பீகார் புல்லாங்குழல்", "क्षत्रिय ज्ञान", "বাংলা ভাষা")
#: The bundled files together stay small: a repository is cloned by every new team member.
MAX_BYTES = 3_000_000
SHOTS = Path("/tmp/answer-review-fonts")


def test_the_config_serves_every_bundled_face_in_one_stack() -> None:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert config["server"]["enableStaticServing"] is True
    theme = config["theme"]
    assert theme["fontFaces"] == fonts.font_faces()
    stacks = {"font": fonts.FONT_STACK, "headingFont": fonts.FONT_STACK, "codeFont": fonts.CODE_STACK}
    assert {name: theme[name] for name in stacks} == stacks
    sidebar = theme.get("sidebar", {})  # the sidebar takes [theme]'s fonts unless it names its own
    assert {name: sidebar.get(name, theme[name]) for name in stacks} == stacks
    assert fonts.FONT_STACK.startswith('"Source Sans", ')  # Streamlit's Latin face stays first


def test_every_file_is_bundled_with_its_license_and_named_as_declared() -> None:
    files = fonts.font_files()
    assert len(files) == 2 * len(fonts.SCRIPTS) == 18
    total = sum(f.stat().st_size for f in files)
    assert total < MAX_BYTES, f"{total:,} bytes of fonts"
    license_text = fonts.LICENSE_FILE.read_text(encoding="utf-8")
    assert "SIL Open Font License, Version 1.1" in license_text and "PERMISSION & CONDITIONS" in license_text
    for path, face in zip(files, fonts.font_faces(), strict=True):
        assert face["url"].endswith(path.name)
        found = subprocess.run(
            ["fc-query", "-f", "%{family[0]}|%{weight}", str(path)], capture_output=True, text=True, check=True
        ).stdout
        family, weight = found.split("|")
        assert family == face["family"], path.name  # the name kaleido's Chromium finds it by
        assert (int(weight) >= 200) == (face["weight"] == "700"), (path.name, weight)  # fontconfig: 80 or 200


#: The picture's layout for the comparison: fixed margins (the labels' widths move nothing) and a
#: row pitch of a whole 90 pixels (write_picture's height for n rows is 220 + n * 90), so two rows
#: whose labels draw alike give the same pixels.
MARGIN = {"l": 250, "r": 60, "t": 100, "b": 120}
PITCH = 90


def figure(labels: list[str]) -> go.Figure:
    """The model x language picture, a model per label (a row with a cell each, so the labels show)."""
    cells = [TableCell(model, "Tamil", ("run",), 10, 5, ESTIMATE, 0.5, 0.3, 0.7) for model in labels]
    drawn = table_figure(labels, ["Tamil"], cells, "t")
    # The test's own geometry (a row every PITCH pixels), whatever height the page's chart takes.
    height = MARGIN["t"] + MARGIN["b"] + PITCH * len(labels)
    drawn.update_layout(margin=MARGIN, yaxis_automargin=False, yaxis_title=None, height=height)
    return drawn


def label_band(image: Image.Image, row: int) -> bytes:
    """The pixels left of the plot, beside row ``row``: its label and nothing else."""
    top = MARGIN["t"] + row * PITCH
    return image.crop((0, top, MARGIN["l"], top + PITCH)).tobytes()


@dataclass
class Trap:
    """A proxy on 127.0.0.1 that records the first line of each request and answers nothing."""

    url: str
    seen: list[str] = field(default_factory=list)


@pytest.fixture
def trap() -> Iterator[Trap]:
    listener = socket.create_server(("127.0.0.1", 0))
    found = Trap(f"http://127.0.0.1:{listener.getsockname()[1]}")

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            with conn:
                conn.settimeout(5)
                try:
                    found.seen.append(conn.recv(4096).split(b"\r\n")[0].decode("latin-1"))
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield found
    finally:
        listener.close()


def test_the_png_draws_indic_labels_without_system_fonts_or_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trap: Trap
) -> None:
    """Each label is drawn: in the picture, written as the command line writes it (``python -m
    scoring table --out t.png``), its row's label differs from the row below holding the same label
    as missing-glyph boxes (one per code point, the spaces kept), which is what a Chromium without
    the fonts draws for it. The picture is kept as ``/tmp/answer-review-fonts/labels.png``.

    And no request leaves: the dead-end proxy Chromium is given is, here, a recorder in its place;
    every request Chromium makes by itself (MathJax from cdnjs at least) arrives there, none goes
    to the network directly."""
    monkeypatch.setenv("FONTCONFIG_FILE", str(glyphs.latin_only_fontconfig(tmp_path)))
    monkeypatch.setattr(table_picture, "DEAD_END_PROXY", trap.url)
    assert glyphs.fonts_for_language(tmp_path / "latin-only-fonts.conf", "ta") == []
    boxed = ["".join(" " if ch == " " else glyphs.BOX for ch in label) for label in LABELS]
    # the last row: the first boxes again, with another code point that no font has (a row of its
    # own, drawn alike): the check that equal drawings give equal bands, so a difference means one
    rows = [text for pair in zip(LABELS, boxed, strict=True) for text in pair] + [
        boxed[0].replace(glyphs.BOX, "\ue001")
    ]
    written = write_picture(figure(rows), tmp_path / "labels.png")
    assert written.fallback_reason == "", written.fallback_reason
    image = Image.open(written.path).convert("RGB")
    SHOTS.mkdir(exist_ok=True)
    image.save(SHOTS / "labels.png")
    assert image.size[1] == MARGIN["t"] + MARGIN["b"] + PITCH * len(rows), image.size
    assert label_band(image, 1) == label_band(image, 6), "two rows of boxes are not drawn alike"
    for i, label in enumerate(LABELS):
        same = label_band(image, 2 * i) == label_band(image, 2 * i + 1)
        assert not same, f"{label!r} is drawn as boxes in the PNG"
    print(f"requests kaleido's Chromium made, all to the dead end: {trap.seen}")
    assert any("cdnjs.cloudflare.com" in line for line in trap.seen), trap.seen
