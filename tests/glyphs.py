"""Helpers for the font tests (issue 36, point 1): a fontconfig file that hides every Indic font of
the system from Chromium, and in-page measurements of whether a text is drawn or shown as the
missing-glyph box.

Not a test module (pytest collects only ``test_*.py``).

How a missing glyph is told from a drawn one: in the page, on a canvas, each text is drawn in a
given CSS font (the very font string the page uses: style, weight, size and family list) and its
advance width, then its pixels, are compared with the same font drawing 1..k characters that no font
has (U+E000, a private-use code point): what a browser draws for a character no font covers is the
first font's ``.notdef`` glyph, the box, so a text drawn as boxes gives exactly those pixels. Each
cluster is checked whole, and each of its code points alone (so a cluster drawn half as glyphs and
half as boxes is caught by the code point drawn as a box).
"""

from __future__ import annotations

import glob
import os
import subprocess
from pathlib import Path

#: Where Debian keeps the Latin fonts the tests let Chromium see (DejaVu, Liberation): nothing else.
LATIN_ONLY_DIRS = ("/usr/share/fonts/truetype/dejavu*", "/usr/share/fonts/truetype/liberation*")

#: A private-use code point no font here has: its rendering is the missing-glyph box.
BOX = "\ue000"


def latin_only_fontconfig(folder: Path) -> Path:
    """A ``FONTCONFIG_FILE`` that lists only the DejaVu and Liberation folders (with the system's
    rules, none of its other folders), so Chromium started with it sees no Indic font even on a
    machine that has ``fonts-noto-core`` installed."""
    dirs = sorted(d for pattern in LATIN_ONLY_DIRS for d in glob.glob(pattern) if os.path.isdir(d))
    assert dirs, f"no DejaVu or Liberation fonts under /usr/share/fonts ({LATIN_ONLY_DIRS})"
    conf = folder / "latin-only-fonts.conf"
    lines = "\n".join(f"  <dir>{d}</dir>" for d in dirs)
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
        f"{lines}\n  <cachedir>{folder / 'fontconfig-cache'}</cachedir>\n"
        # The system's rules (sans-serif is DejaVu Sans, Arial is Liberation Sans, ...), not its folders.
        '  <include ignore_missing="yes">/etc/fonts/conf.d</include>\n</fontconfig>\n',
        encoding="utf-8",
    )
    return conf


def fonts_for_language(conf: Path, lang: str) -> list[str]:
    """``fc-list :lang=<lang>`` as a process with ``FONTCONFIG_FILE=conf`` sees it."""
    out = subprocess.run(
        ["fc-list", f":lang={lang}", "family"],
        env={**os.environ, "FONTCONFIG_FILE": str(conf)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [line for line in out.stdout.splitlines() if line.strip()]


def code_points(clusters: list[str]) -> list[str]:
    """Every code point of ``clusters`` once, in order of first use."""
    return list(dict.fromkeys(ch for cluster in clusters for ch in cluster))


#: In the page: for each CSS font, every text drawn on a canvas, compared with 1..k boxes in the
#: same font (pixels and advance width). Returns the (font, text) pairs drawn as boxes, and how
#: many pairs were measured. The fonts are loaded first (a face not loaded yet draws as a box).
MEASURE = """async ({fonts, texts, box}) => {
    const most = Math.max(...texts.map(t => [...t].length));
    const canvas = document.createElement('canvas');
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    const fill = window.__fillText || CanvasRenderingContext2D.prototype.fillText;  // not recorded
    const missing = [];
    let measured = 0;
    for (const font of fonts) {
        await document.fonts.load(font, texts.join(' '));
        const px = parseFloat(/([\\d.]+)px/.exec(font)[1]);
        canvas.width = Math.ceil(px * 10);
        canvas.height = Math.ceil(px * 3);
        const look = (text) => {  // the drawn pixels' coverage
            ctx.font = font;
            ctx.clearRect(0, 0, canvas.width, canvas.height);
            fill.call(ctx, text, Math.ceil(px), Math.ceil(px * 2));
            const rgba = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
            const alpha = new Uint8Array(rgba.length / 4);
            for (let i = 0; i < alpha.length; i++) alpha[i] = rgba[4 * i + 3];
            return alpha;
        };
        const width = (text) => { ctx.font = font; return ctx.measureText(text).width; };
        const boxes = [];
        for (let k = 1; k <= most; k++) boxes.push({width: width(box.repeat(k)), alpha: look(box.repeat(k))});
        for (const text of texts) {
            measured += 1;
            const w = width(text);  // a text as wide as no row of boxes is not drawn as boxes
            const alike = boxes.filter(b => b.width === w);
            if (!alike.length) continue;
            const seen = look(text);
            if (alike.some(b => b.alpha.every((v, i) => v === seen[i]))) missing.push([font, text]);
        }
    }
    return {missing, measured};
}"""

#: In the page: the CSS font (style, weight, size, family) of every element that holds text of
#: its own, with how many elements use it (the icon font's ligatures are not text).
PAGE_FONTS = """() => {
    const found = {};
    for (const el of document.querySelectorAll("[data-testid='stApp'] *")) {
        if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
        const cs = getComputedStyle(el);
        if (cs.fontFamily.includes('Material Symbols')) continue;
        const font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        found[font] = (found[font] || 0) + 1;
    }
    return found;
}"""

#: Before the page's scripts: record every text a canvas draws (the data grid draws its cells on a
#: canvas) with the font it was drawn in and whether that font's faces for the text were loaded
#: at that moment (a face still loading draws the fallback: a box for a letter no system font has).
RECORD_CANVAS_TEXT = """(() => {
    window.__drawn = [];
    const original = CanvasRenderingContext2D.prototype.fillText;
    window.__fillText = original;
    CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
        const s = String(text);
        if (/[\\u0900-\\u0DFF]/.test(s)) {
            window.__drawn.push({text: s, font: this.font, loaded: document.fonts.check(this.font, s),
                                 at: performance.now()});
        }
        return original.call(this, text, ...rest);
    };
})();"""

#: In the page: the CSS fonts of the chart labels (Plotly's SVG text) that hold Indic text.
CHART_FONTS = """() => [...document.querySelectorAll('.main-svg text')]
    .filter(t => /[\\u0900-\\u0DFF]/.test(t.textContent))
    .map(t => getComputedStyle(t))
    .map(cs => `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`)"""
