"""Every letter of every row is drawn (issue 36, point 1), in Debian chromium, on a machine whose
system has no Indic font at all.

Chromium is started with a ``FONTCONFIG_FILE`` that lists only DejaVu and Liberation
(``glyphs.latin_only_fontconfig``), so what it draws comes from the app's bundled fonts or is a
box, on this machine and on one that has ``fonts-noto-core`` installed. The app (``streamlit run``,
its own SQLite file) is given a generated corpus (``font_corpus``: every consonant x vowel sign of
Tamil and Devanagari, conjuncts, a line of each other bundled script) as a run named in Tamil. The
test opens the Overview (its chart's labels are the Tamil and Bengali domains), the review card,
the reviewer's table of verdicts (a data grid drawn on a canvas) and the Model x language page,
reads the CSS font of every element holding text, of every canvas draw and of every chart label,
and measures every cluster and every code point of the corpus in each of those fonts against the
missing-glyph box (``glyphs.MEASURE``).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import font_corpus
import glyphs
import pytest
from browser import CHROMIUM_ARGS, TIMEOUT_MS, AppServer, open_nav, require_chromium, settle, upload_file
from playwright.sync_api import Browser, Page, expect, sync_playwright

from scoring.core.fonts import FAMILIES

SHOTS = Path("/tmp/answer-review-fonts")
RUN_FILE = "மாதிரி_tamil.csv"  # model மாதிரி ("sample"), language Tamil: a Tamil title, picker and label
REVIEWER = "font_checker"
MAIN = "[data-testid='stMain']"
FIRST_TAMIL = font_corpus.tamil()[0]
#: Streamlit's theme weights: normal, semiBold, bold (and headings), extrabold (h1).
THEME_WEIGHTS = (400, 500, 600, 700)


@pytest.fixture(scope="module")
def latin_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fontconfig file Chromium runs with; fontconfig itself confirms it holds no Indic font."""
    conf = glyphs.latin_only_fontconfig(tmp_path_factory.mktemp("fontconfig"))
    for lang in ("ta", "hi", "bn", "te", "kn", "ml", "gu", "pa", "or"):
        assert glyphs.fonts_for_language(conf, lang) == [], f"the test's fontconfig still has {lang} fonts"
    return conf


@pytest.fixture(scope="module")
def browser(latin_only: Path) -> Iterator[Browser]:
    """Headless Debian chromium that sees only DejaVu and Liberation among the system's fonts."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=require_chromium(),
            headless=True,
            args=CHROMIUM_ARGS,
            env={**os.environ, "FONTCONFIG_FILE": str(latin_only)},
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A reviewer's window at 1280x720, every canvas draw recorded from the first script on."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(glyphs.RECORD_CANVAS_TEXT)
    try:
        yield context.new_page()
    finally:
        context.close()


def page_fonts(page: Page) -> set[str]:
    """The CSS fonts (style weight size family) of every element on the page holding text."""
    return set(page.evaluate(glyphs.PAGE_FONTS))


def measure(page: Page, fonts: set[str], texts: list[str]) -> tuple[list[list[str]], int]:
    found = page.evaluate(glyphs.MEASURE, {"fonts": sorted(fonts), "texts": texts, "box": glyphs.BOX})
    return found["missing"], found["measured"]


def weight_size(font: str) -> str:
    """``600 14px`` of a CSS font string (weight 400 when it names none)."""
    weight = re.search(r"\b([1-9]00)\b", font)
    size = re.search(r"([\d.]+px)", font)
    return f"{weight.group(1) if weight else 400} {size.group(1) if size else '?'}"


def names_every_family(font: str) -> bool:
    """A CSS font string names the bundled stack: Source Sans (or Source Code Pro) and every Noto."""
    return all(f'"{family}"' in font for family in FAMILIES[1:])


def test_the_system_has_no_indic_font_and_a_box_is_told_apart(page: Page) -> None:
    """The measurement's own check: with the system's fonts alone, Tamil, Devanagari and Bengali are
    boxes (so a pass below is the bundled fonts' doing), and a Latin letter is not."""
    page.set_content("<p>x</p>")
    missing, measured = measure(page, {"normal 400 16px sans-serif"}, ["கி", "कि", "কি", "ab"])
    assert measured == 4
    assert sorted(text for _, text in missing) == sorted(["கி", "कि", "কি"]), missing


def chart_fonts(page: Page) -> set[str]:
    """The CSS fonts of the chart labels on the page holding Indic text (domains, the model's name)."""
    return set(page.evaluate(glyphs.CHART_FONTS))


def test_every_cluster_is_drawn_in_every_font_of_the_pages(server: AppServer, page: Page) -> None:
    """The corpus, in every font the pages draw text in (and at each weight Streamlit's theme
    names), shows no missing glyph; the card, the table and the charts name the bundled stack, and
    the table's last drawing of each text came after its font loaded."""
    SHOTS.mkdir(exist_ok=True)
    clusters = font_corpus.clusters()
    texts = clusters + [ch for ch in glyphs.code_points(clusters) if ch not in clusters]
    page.goto(f"{server.url}/?reviewer={REVIEWER}", timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, RUN_FILE, font_corpus.corpus_csv())  # opens the Overview: its title and chart
    expect(page.locator(".main-svg").first).to_be_visible(timeout=TIMEOUT_MS)
    labels = chart_fonts(page)
    fonts = page_fonts(page) | labels

    open_nav(page, "Review queue", "Review queue")
    card = page.locator(MAIN).locator("[data-q-item]").first  # the card's block (its keyboard marker)
    expect(card).to_contain_text(FIRST_TAMIL, timeout=TIMEOUT_MS)
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    page.screenshot(path=str(SHOTS / "card.png"))
    fonts |= page_fonts(page)
    card_font = card.evaluate("(el) => getComputedStyle(el).fontFamily")
    fonts |= {f"normal {weight} 16px {card_font}" for weight in THEME_WEIGHTS}

    # Marked, the row is in the reviewer's table; opened afresh (no card has loaded a font yet),
    # the table draws the corpus on its canvas.
    page.locator(".st-key-q_yes button").click()
    settle(page)
    page.goto(f"{server.url}/review?reviewer={quote(REVIEWER)}", timeout=TIMEOUT_MS)
    settle(page)
    page.locator(".st-key-q_view button", has_text="My verdicts").click()
    settle(page)
    expect(page.locator("[data-testid='stDataFrame']").first).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_function("(t) => window.__drawn.some(d => d.text.includes(t))", arg=FIRST_TAMIL)
    page.wait_for_timeout(1500)  # a font loading now has been drawn with by then, or never will be
    page.screenshot(path=str(SHOTS / "table.png"))
    drawn = page.evaluate("() => window.__drawn")
    last = {d["text"]: d for d in drawn}  # what the grid shows now: each text's latest draw
    grid_fonts = {d["font"] for d in drawn}
    fonts |= grid_fonts | page_fonts(page)

    open_nav(page, "Model x language", "Model x language")  # the heatmap's labels and the table
    expect(page.locator(".main-svg").first).to_be_visible(timeout=TIMEOUT_MS)
    labels |= chart_fonts(page)
    fonts |= labels | page_fonts(page)

    started = time.monotonic()
    missing, measured = measure(page, fonts, texts)
    print(
        f"{len(texts)} texts x {len(fonts)} fonts of the pages ({', '.join(sorted(map(weight_size, fonts)))}): "
        f"{measured} measured in {time.monotonic() - started:.1f} s"
    )
    assert measured == len(texts) * len(fonts)
    assert not missing, f"{len(missing)} (font, text) drawn as boxes, e.g. {[(m[0][:40], m[1]) for m in missing[:12]]}"
    assert all(names_every_family(f) for f in fonts), sorted(f for f in fonts if not names_every_family(f))
    assert names_every_family(card_font), f"the card's font: {card_font}"
    assert any(FIRST_TAMIL in text for text in last), f"the table drew no Tamil: {sorted(last)[:5]}"
    not_ready = [d for d in last.values() if not d["loaded"]]
    assert not not_ready, f"the table last drew {len(not_ready)} texts before their font loaded: {not_ready[:3]}"
    assert labels, "no chart label holds the run's Indic domain or model names"
