"""The fonts that draw dataset text, wherever it is drawn (issue 36, point 1).

A reviewer must see every letter of every row, whatever fonts their own machine has. Streamlit ships
only Source Sans (Latin, Greek, Cyrillic); any other script fell back to the system's fonts, and a
machine without Indic fonts, or with an incomplete set, drew Tamil questions as empty boxes. So the
app ships the Noto Sans fonts of nine Indic scripts (``static/fonts``, SIL Open Font License, the
license beside them) and every place that draws dataset text names the same stack, this module's
:data:`FONT_STACK`:

- the page (the card, headings, widgets, tables, charts): ``.streamlit/config.toml`` declares the
  faces (``[[theme.fontFaces]]``, served by ``server.enableStaticServing``) and the stack
  (``[theme] font``, ``headingFont``, ``codeFont``, which the sidebar takes too); Streamlit gives
  the body font to ``st.dataframe`` and, through its chart theme, to every Plotly chart.
  ``tests/test_fonts.py`` checks that the file says what :func:`font_faces` and :data:`FONT_STACK`
  say, so this module stays the one home of the list;
- pictures drawn outside the page (the model x language table as PNG/SVG/PDF, drawn by kaleido in a
  headless Chromium that sees only the system's fonts): :func:`fonts_visible_to_subprocesses` makes
  the bundled files visible to it through fontconfig;
- a self-contained file opened anywhere (the team's report): :func:`embedded_fonts` puts the
  Regular face of each script its text uses inside it, as long as they fit a budget.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

#: Where the font files live, and the URL Streamlit serves that folder at (``static/`` next to
#: ``app.py`` is served at ``app/static/`` with ``server.enableStaticServing``).
FONT_DIR = Path(__file__).resolve().parents[2] / "static" / "fonts"
FONT_URL = "app/static/fonts/"
LICENSE_FILE = FONT_DIR / "OFL.txt"

#: Latin first: Streamlit's own face, served by the Streamlit server with its frontend.
LATIN = "Source Sans"

#: Characters every Indic font here also covers (danda, zero-width (non-)joiner, the dotted circle
#: shown for a vowel sign with no consonant), added to each face's Unicode range.
SHARED_RANGE = "U+0964-0965, U+200C-200D, U+25CC"

#: The files' weights: Streamlit draws text at 400 (body), 500 (semiBold), 600 (bold, headings) and
#: 700 (extrabold, h1); the browser draws 400 and 500 with Regular and 600 and 700 with Bold.
WEIGHTS = {"Regular": 400, "Bold": 700}


@dataclass(frozen=True)
class Script:
    """One bundled script: its Noto family (files ``NotoSans<file>-<weight>.ttf``) and the Unicode
    ranges its faces serve (so a page loads only the fonts its text needs)."""

    name: str
    file: str
    unicode_range: str

    @property
    def family(self) -> str:
        return f"Noto Sans {self.file}"


SCRIPTS = (
    Script("Devanagari", "Devanagari", "U+0900-097F, U+1CD0-1CFF, U+A8E0-A8FF, U+200C-200D, U+25CC"),
    Script("Bengali", "Bengali", f"U+0980-09FF, {SHARED_RANGE}"),
    Script("Tamil", "Tamil", f"U+0B80-0BFF, {SHARED_RANGE}"),
    Script("Telugu", "Telugu", f"U+0C00-0C7F, {SHARED_RANGE}"),
    Script("Kannada", "Kannada", f"U+0C80-0CFF, {SHARED_RANGE}"),
    Script("Malayalam", "Malayalam", f"U+0D00-0D7F, {SHARED_RANGE}"),
    Script("Gujarati", "Gujarati", f"U+0A80-0AFF, {SHARED_RANGE}"),
    Script("Gurmukhi", "Gurmukhi", f"U+0A00-0A7F, {SHARED_RANGE}"),
    Script("Odia", "Oriya", f"U+0B00-0B7F, {SHARED_RANGE}"),
)

#: Every family, Latin first, each Indic family after it: the browser picks per character.
FAMILIES = (LATIN, *(s.family for s in SCRIPTS))
#: The CSS font stack (body, headings, tables, charts); :data:`CODE_STACK` for monospace text.
FONT_STACK = ", ".join(f'"{f}"' for f in FAMILIES) + ", sans-serif"
CODE_STACK = ", ".join(f'"{f}"' for f in ("Source Code Pro", *FAMILIES[1:])) + ", monospace"


def font_files() -> list[Path]:
    """Every bundled font file, in :data:`SCRIPTS` order, Regular then Bold."""
    return [FONT_DIR / f"NotoSans{s.file}-{w}.ttf" for s in SCRIPTS for w in WEIGHTS]


def font_faces() -> list[dict[str, str]]:
    """The ``[[theme.fontFaces]]`` tables ``.streamlit/config.toml`` holds, one per file."""
    return [
        {
            "family": s.family,
            "url": f"{FONT_URL}NotoSans{s.file}-{w}.ttf",
            "weight": str(weight),
            "style": "normal",
            "unicodeRange": s.unicode_range,
        }
        for s in SCRIPTS
        for w, weight in WEIGHTS.items()
    ]


def fontconfig_text(font_dir: Path, cache_dir: Path, base: str | None) -> str:
    """A fontconfig file: the ``base`` configuration (the system's when ``None``) plus ``font_dir``."""
    include = escape(base or "/etc/fonts/fonts.conf")
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
        f'  <include ignore_missing="yes">{include}</include>\n'
        f"  <dir>{escape(str(font_dir))}</dir>\n"
        f"  <cachedir>{escape(str(cache_dir))}</cachedir>\n"
        "</fontconfig>\n"
    )


@contextmanager
def fonts_visible_to_subprocesses() -> Iterator[Path]:
    """While inside, a process started (kaleido's Chromium, which copies this environment) finds
    the bundled fonts as system fonts: ``FONTCONFIG_FILE`` names a file that keeps the caller's own
    configuration (their ``FONTCONFIG_FILE``, else the system's) and adds :data:`FONT_DIR`.

    Chromium draws a picture's text from fontconfig's fonts only (an SVG drawn as an image loads no
    web font), so without this a machine with no Indic fonts drew the table's labels as boxes.
    Used by the command line; it sets a variable of the whole process, so a server does not call it
    from a request."""
    with tempfile.TemporaryDirectory(prefix="answer-review-fonts-") as tmp:
        conf = Path(tmp) / "fonts.conf"
        before = os.environ.get("FONTCONFIG_FILE")
        conf.write_text(fontconfig_text(FONT_DIR, Path(tmp) / "cache", before), encoding="utf-8")
        os.environ["FONTCONFIG_FILE"] = str(conf)
        try:
            yield conf
        finally:
            if before is None:
                os.environ.pop("FONTCONFIG_FILE", None)
            else:
                os.environ["FONTCONFIG_FILE"] = before


#: The most font bytes a self-contained file carries (base64 adds a third): the Regular faces of
#: about three scripts. Past it a script's family is only named in the stack.
EMBED_BUDGET = 700_000


def _block(script: Script) -> tuple[int, int]:
    """The script's own Unicode block (its range's first part; the shared signs do not count)."""
    first = script.unicode_range.split(",")[0].strip().removeprefix("U+")
    low, _, high = first.partition("-")
    return int(low, 16), int(high or low, 16)


def scripts_in(text: str) -> list[Script]:
    """The bundled scripts whose letters occur in ``text``, the most used first."""
    blocks = [(_block(s), s) for s in SCRIPTS]
    counts: dict[str, int] = {}
    for char in text:
        code = ord(char)
        for (low, high), script in blocks:
            if low <= code <= high:
                counts[script.name] = counts.get(script.name, 0) + 1
                break
    return sorted((s for s in SCRIPTS if s.name in counts), key=lambda s: -counts[s.name])


@dataclass(frozen=True)
class EmbeddedFonts:
    """``@font-face`` rules with the fonts inside (``data:`` URLs), and which families they hold
    and which were left to the reader's machine (past :data:`EMBED_BUDGET`)."""

    css: str
    embedded: tuple[str, ...]
    named_only: tuple[str, ...]


def embedded_fonts(text: str, budget: int = EMBED_BUDGET) -> EmbeddedFonts:
    """The Regular face of each bundled script ``text`` uses, most used first, while they fit
    ``budget`` bytes (a browser draws their bold from the Regular face)."""
    rules, embedded, left = [], [], []
    used = 0
    for script in scripts_in(text):
        path = FONT_DIR / f"NotoSans{script.file}-Regular.ttf"
        size = path.stat().st_size
        if used + size > budget:
            left.append(script.family)
            continue
        used += size
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        rules.append(
            f'@font-face {{ font-family: "{script.family}"; font-weight: 100 900; font-style: normal; '
            f'src: url(data:font/ttf;base64,{data}) format("truetype"); unicode-range: {script.unicode_range}; }}'
        )
        embedded.append(script.family)
    return EmbeddedFonts("\n".join(rules), tuple(embedded), tuple(left))
