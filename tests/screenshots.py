"""The README's screenshots: the dashboard on its bundled sample, in Debian chromium at 1280x720.

Not a test (pytest collects only ``test_*.py``): ``make screenshots`` runs it. It starts
``streamlit run app.py`` on a free port with a throwaway SQLite file (the app loads the bundled
sample into an empty database), then writes viewport screenshots (not full pages, to keep the PNGs
small):

- ``docs/img/start-here.png``: the landing page (Start here);
- ``docs/img/review-card.png``: the Review queue showing a row, with a reviewer name typed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]  # `browser` (tests/browser.py) imports `scoring`

from browser import TIMEOUT_MS, launch_chromium, no_exception, open_nav, settle, start_app  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

VIEWPORT = {"width": 1280, "height": 720}
REVIEWER = "asha"


def type_reviewer(page: Page, name: str) -> None:
    """Type a name in the sidebar's reviewer field, as a person does."""
    field = page.locator(".st-key-reviewer_name input")
    field.fill(name)
    field.press("Enter")
    settle(page)


def take(out: Path) -> list[Path]:
    """Start the app, take both screenshots into ``out``, stop the app; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="screenshots-") as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        server = start_app(f"sqlite:///{folder / 'review.db'}", folder / "streamlit.log")
        try:
            browser = launch_chromium(playwright)
            try:
                context = browser.new_context(viewport=VIEWPORT)
                context.set_default_timeout(TIMEOUT_MS)
                page = context.new_page()
                page.goto(server.url, timeout=TIMEOUT_MS)
                settle(page)
                expect(page.locator("h1").first).to_be_visible()
                no_exception(page, "the landing page")
                page.mouse.move(0, 0)  # no hover highlight in the picture
                written.append(out / "start-here.png")
                page.screenshot(path=written[-1])

                type_reviewer(page, REVIEWER)
                open_nav(page, "Review queue", "Review queue")
                expect(page.locator("[data-testid='stMain']")).to_contain_text("of the run", timeout=TIMEOUT_MS)
                settle(page)
                no_exception(page, "the review queue")
                page.mouse.move(0, 0)
                written.append(out / "review-card.png")
                page.screenshot(path=written[-1])
            finally:
                browser.close()
        finally:
            server.stop()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNGs")
    args = parser.parse_args(argv)
    for path in take(args.out):
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
