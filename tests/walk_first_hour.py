"""A new team's first hour, walked in Debian chromium at 1280x720 (issue 36, "Done when").

Not a test (pytest collects only ``test_*.py``): ``make walk`` runs it, on a fresh SQLite file,
with a mixed-language file the tests never saw (English, Hindi, Tamil and Bengali; two models on
the same questions; a new random seed each time, printed), and with the system's Indic fonts
hidden from the browser (the app must draw every letter with its own). As a person does: type a
name, upload both models' files, plan a blind audit on True accuracy, review it by keyboard at a
person's pace with some double taps, leave for the Overview and come back by the sidebar, refresh.

It prints, and checks: every stored verdict equals the key pressed on the row seen (a press on a
row painted for less than 150 ms stores nothing and the page says so); no letter of any card is
drawn as the missing-glyph box; the question, golden answer and response and the four buttons are
visible unscrolled on every card; the queue is back in place after the round trip and the refresh.
Exits non-zero when one of them fails.

    .venv/bin/python tests/walk_first_hour.py [--reviews 195] [--rows 300] [--seed N]
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import glyphs  # noqa: E402
from browser import CHROMIUM_ARGS, TIMEOUT_MS, look_at_row, open_nav, require_chromium, settle, start_app  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402
from queue_browser import (  # noqa: E402
    check_presses,
    settle_presses,
    start_recording,
    stored_events,
    type_reviewer,
)

from scoring import store  # noqa: E402
from scoring.store import make_engine  # noqa: E402

#: Per language: (entity, golden answer) pairs and a question about the entity. Tamil questions
#: begin with a consonant and a vowel sign (பீகார், புல்லாங்குழல்): the case that drew as boxes.
FACTS = {
    "english": (
        "{e}: which answer does the quiz expect?",
        [
            ("The national song", "Vande Mataram"),
            ("The author of Gitanjali", "Rabindranath Tagore"),
            ("The river of Varanasi", "Ganga river"),
            ("The classical dance of Kerala", "Kathakali dance"),
            ("The festival of lights", "Diwali festival"),
            ("The mountain range of the north", "Himalaya mountains"),
        ],
    ),
    "hindi": (
        "{e}: प्रश्नोत्तरी किस उत्तर की अपेक्षा करती है?",
        [
            ("गीतांजलि के लेखक", "रवीन्द्रनाथ ठाकुर"),
            ("वाराणसी की नदी", "गंगा नदी"),
            ("केरल का शास्त्रीय नृत्य", "कथकली नृत्य"),
            ("रोशनी का त्योहार", "दीपावली त्योहार"),
            ("आगरा का स्मारक", "ताज महल"),
            ("क्षत्रिय राजाओं का राज्य", "राजस्थान प्रदेश"),
        ],
    ),
    "tamil": (
        "{e} பற்றி வினாடி வினா எந்த விடையை எதிர்பார்க்கிறது?",
        [
            ("பீகாரின் தலைநகரம்", "பட்னா நகரம்"),
            ("புல்லாங்குழல் வாசித்த கடவுள்", "கிருஷ்ண பகவான்"),
            ("திருக்குறளை எழுதியவர்", "திருவள்ளுவர் புலவர்"),
            ("பொங்கல் கொண்டாடும் மாநிலம்", "தமிழ் நாடு"),
            ("மீனாட்சி கோவில் உள்ள நகரம்", "மதுரை மாநகரம்"),
            ("ஸ்ரீரங்கம் கோவிலின் ஆறு", "காவேரி ஆறு"),
        ],
    ),
    "bengali": (
        "{e}: কুইজ কোন উত্তর আশা করে?",
        [
            ("গীতাঞ্জলির লেখক", "রবীন্দ্রনাথ ঠাকুর"),
            ("বাংলার প্রধান উৎসব", "দুর্গা পূজা"),
            ("বাঘের বন", "সুন্দরবন অরণ্য"),
            ("কলকাতার মিষ্টি", "রসগোল্লা মিষ্টি"),
            ("ক্ষুদিরামের জন্মস্থান", "মেদিনীপুর জেলা"),
            ("শান্তিনিকেতনের প্রতিষ্ঠাতা", "দেবেন্দ্রনাথ ঠাকুর"),
        ],
    ),
}
DOMAINS = ("Literature", "Geography", "Festivals", "Art")
#: Every question ends with its number, so the walk's own record can tell rows apart.
QUESTION_ID = r"\[q\d+\]"


def dataset(rows: int, rng: random.Random) -> tuple[list[dict[str, str]], dict[str, list[dict[str, str]]]]:
    """``rows`` questions spread over the four languages, and each model's responses to them: a
    response that holds the golden answer, the golden words in another order (word overlap alone
    passes), or another fact's answer."""
    questions = []
    for i in range(rows):
        lang = list(FACTS)[i % 4]
        template, facts = FACTS[lang]
        entity, answer = facts[rng.randrange(len(facts))]
        questions.append(
            {
                "question": f"{template.format(e=entity)} [q{i}]",
                "answer": answer,
                "Domain": DOMAINS[rng.randrange(len(DOMAINS))],
                "language": lang,
            }
        )
    runs = {}
    for model, share in (("model_a", (0.45, 0.35)), ("model_b", (0.30, 0.35))):
        out = []
        for q in questions:
            _, facts = FACTS[q["language"]]
            roll = rng.random()
            words = q["answer"].split()
            if roll < share[0]:
                response = f"{q['answer']}."
            elif roll < share[0] + share[1]:
                response = " ".join(reversed(words)) + " (" + words[0] + ")"
            else:
                response = facts[rng.randrange(len(facts))][1] + "?"
            out.append({**q, "response": response, "model": model})
        runs[model] = out
    return questions, runs


def to_csv(rows: list[dict[str, str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["question", "answer", "Domain", "language", "model", "response"])
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def judged_correct(question: str, rows: list[dict[str, str]]) -> bool:
    """What the reviewer decides on reading the row: every golden word in the response."""
    row = next(r for r in rows if r["question"] == question)
    return all(w in row["response"] for w in row["answer"].split())


#: The row's question, golden answer and response blocks and the four buttons: inside 1280x720
#: with nothing scrolled. Returns what is not.
UNSEEN = """() => {
    const card = document.querySelector('[data-q-screen]');
    if (!card) return ['no card'];
    const blocks = [...card.children].filter((e) => e.children.length === 2).map((e) => e.lastElementChild);
    const keys = ['q_yes', 'q_no', 'q_skip', 'q_undo'].map((k) => document.querySelector('.st-key-' + k + ' button'));
    const bad = [];
    let scrolled = window.scrollY;
    for (let p = card.parentElement; p; p = p.parentElement) scrolled += p.scrollTop;
    if (scrolled) bad.push('scrolled ' + scrolled);
    [...blocks, ...keys].forEach((e, i) => {
        if (!e) { bad.push('missing ' + i); return; }
        const r = e.getBoundingClientRect();
        const off = r.top < 0 || r.bottom > 720 || r.right > 1280;
        if (off) bad.push(`${i}: ${Math.round(r.top)}-${Math.round(r.bottom)}`);
    });
    return bad;
}"""
#: The row's question, golden answer and response as drawn (each a caption and a body in the card).
CARD_TEXTS = """() => [...(document.querySelector('[data-q-screen]') || {children: []}).children]
    .filter((e) => e.children.length === 2).map((e) => e.lastElementChild.innerText)"""
CARD_FONTS = """() => [...new Set([...document.querySelectorAll('[data-q-screen] *')].map((el) => {
    const cs = getComputedStyle(el); return `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`; }))]"""


def place(page: Page) -> tuple[str, str]:
    """The scope picker's value and the page's address."""
    return page.locator(".st-key-q_bucket").inner_text(), page.url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=195)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    questions, runs = dataset(args.rows, rng)
    print(f"seed {args.seed}: {len(questions)} questions x {len(runs)} models in {', '.join(FACTS)}")
    require_chromium()
    problems: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="first-hour-"))
    conf = glyphs.latin_only_fontconfig(folder)
    server = start_app(f"sqlite:///{folder / 'review.db'}", folder / "streamlit.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=require_chromium(),
                headless=True,
                args=CHROMIUM_ARGS,
                env={"FONTCONFIG_FILE": str(conf)},
            )
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            page.goto(server.url)
            settle(page)
            type_reviewer(page, "first-hour")
            for model, rows in runs.items():
                open_nav(page, "Upload", "Upload a model run")
                page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
                    files=[{"name": f"quiz_{model}.csv", "mimeType": "text/csv", "buffer": to_csv(rows)}]
                )
                expect(page.locator("h1").first).to_contain_text("Overview", timeout=120_000)
                settle(page)
            # Plan the blind audit for model_a (the run picker), on True accuracy.
            engine = make_engine(server.db_url)
            run = store.find_run_by_sha(engine, store.sha256_bytes(to_csv(runs["model_a"])))
            assert run is not None
            frame = store.load_scored(engine, run.id)
            engine.dispose()
            keys_of = dict(zip(frame["question"].astype(str), frame["item_key"].astype(str), strict=True))
            # The walk's record names a row by the number its question ends with ("[q12]").
            by_id = {re.search(QUESTION_ID, q).group(0): k for q, k in keys_of.items()}  # type: ignore[union-attr]
            row_number = {
                re.search(QUESTION_ID, q).group(0): int(i) + 1  # type: ignore[union-attr]
                for q, i in zip(frame["question"].astype(str), frame["row_idx"], strict=True)
            }
            page.goto(f"{server.url}/estimate?run={run.id}&reviewer=first-hour")
            settle(page)
            page.get_by_role("tab", name="Plan").click()
            field = page.locator(".st-key-est_half_width input")
            field.fill("3.5")
            field.press("Enter")
            settle(page)
            page.locator(".st-key-est_audit button").click()
            settle(page)
            open_nav(page, "Review queue", "Review queue")
            page.locator(".st-key-q_bucket").click()
            page.get_by_role("option", name="Estimate: audit sample", exact=False).click()
            settle(page)
            start_recording(page, "", QUESTION_ID)
            fonts = set(page.evaluate(CARD_FONTS))
            cards = boxes = hidden = taps = stored = refused = 0
            back_in_place = refreshed = None
            rows_a = runs["model_a"]
            checked = 0  # marks already checked against a record of presses

            def check_segment(where: str) -> None:
                """The marks since the last check against the presses recorded since then."""
                nonlocal checked, stored, refused
                presses, said = settle_presses(page, server.db_url, "first-hour", 0)
                marks = [e for e in stored_events(server.db_url, "first-hour") if e.action == "mark"][checked:]
                try:
                    got = check_presses(presses, said, marks, by_id, where, rows=row_number.__getitem__)
                    stored, refused = stored + got[0], refused + got[1]
                except AssertionError as exc:
                    problems.append(str(exc)[:2000])
                checked += len(marks)

            for i in range(args.reviews):
                look_at_row(page, ms=int(rng.uniform(400, 1400)))
                bad = page.evaluate(UNSEEN)
                cards += 1
                if bad:
                    hidden += 1
                    problems.append(f"card {cards}: not all visible: {bad}")
                    page.screenshot(path=str(folder / f"hidden-{cards}.png"))
                texts = page.evaluate(CARD_TEXTS)
                words = [w for t in texts for w in t.split()]
                found = page.evaluate(
                    glyphs.MEASURE,
                    {"fonts": sorted(fonts), "texts": words + glyphs.code_points(words), "box": glyphs.BOX},
                )
                if found["missing"]:
                    boxes += len(found["missing"])
                    problems.append(f"card {cards}: drawn as boxes: {found['missing'][:3]}")
                question = next(q for q in keys_of if q in " ".join(texts))
                key = "y" if judged_correct(question, rows_a) else "n"
                page.keyboard.press(key)
                if rng.random() < 0.12:  # a double tap
                    page.wait_for_timeout(rng.randint(30, 80))
                    page.keyboard.press(key)
                    taps += 1
                if i == args.reviews // 3:  # the Overview and back, by the sidebar
                    settle(page)
                    before = place(page)
                    open_nav(page, "Overview", "Overview")
                    open_nav(page, "Review queue", "Review queue")
                    back_in_place = place(page) == before
                    if not back_in_place:
                        problems.append(f"after the Overview and back: {place(page)} (was {before})")
                if i == 2 * args.reviews // 3:  # a refresh
                    check_segment("the walk before the refresh")
                    before = place(page)
                    page.reload()
                    settle(page)
                    refreshed = place(page) == before
                    if not refreshed:
                        problems.append(f"after a refresh: {place(page)} (was {before})")
                    start_recording(page, "", QUESTION_ID)
            check_segment("the walk after the refresh")
            events = [e for e in stored_events(server.db_url, "first-hour") if e.action == "mark"]
            page.screenshot(path=str(folder / "last-card.png"))
            browser.close()
        print(f"cards looked at: {cards}; presses {cards + taps} ({taps} double taps)")
        print(f"verdicts stored: {len(events)}; presses stored on the row seen: {stored}; refused as new: {refused}")
        print(f"cards with a part hidden at 1280x720: {hidden}; words or letters drawn as boxes: {boxes}")
        print(f"back in place after the Overview: {back_in_place}; after a refresh: {refreshed}")
        print(f"screenshots and the server's log: {folder}")
    finally:
        server.stop()
    for problem in problems:
        print("PROBLEM", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
