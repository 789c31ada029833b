"""Why exact failed, in words, when the difference cannot be seen: a double space, a tab, a no-break
space, a space at an end, a zero-width character (issue 27, "Blind audits by default").

Pure: the card renders the sentence as plain text (``st.text``), never as Markdown or HTML.
"""

from __future__ import annotations

import re
import unicodedata

from scoring.core.protocols import exact_substring, is_blank, normalize_text

_WS = re.compile(r"\s+")
_ODD_WS = re.compile(r"\s{2,}|[^\S ]")  # two or more whitespace characters, or one that is not a space
_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five"}
_PREFIX = "Exact failed: golden text not found as one run of characters: "


def _name(ch: str) -> str:
    names = {" ": "a space", "\t": "a tab", "\n": "a line break", "\r": "a carriage return"}
    return names.get(ch) or f"U+{ord(ch):04X} {unicodedata.name(ch, 'character').lower()}"


def describe_whitespace(run: str) -> str:
    """``run`` (whitespace characters) in words: "two spaces", "a tab", "a space and a tab"."""
    if set(run) == {" "}:
        return f"{_NUMBERS.get(len(run), str(len(run)))} spaces" if len(run) > 1 else "a space"
    return " and ".join(_name(ch) for ch in run)


def _snippet(text: str, start: int, end: int, width: int = 20) -> str:
    """The odd run at ``start:end`` with up to ``width`` characters either side, tabs and line
    breaks kept as they are (the sentence names them)."""
    left, right = max(0, start - width), min(len(text), end + width)
    return ("..." if left else "") + text[left:right] + ("..." if right < len(text) else "")


def _odd(text: str, whole: bool) -> str | None:
    """The first invisible difference in ``text`` in words, or None. ``whole``: ``text`` is the
    golden answer, whose leading or trailing spaces count too."""
    if whole and text != text.strip():
        end = "starts" if text[:1].isspace() else "ends"
        run = re.match(r"\s+", text) if end == "starts" else re.search(r"\s+$", text)
        assert run is not None
        return f"'{_snippet(text, run.start(), run.end())}' {end} with {describe_whitespace(run.group())}"
    found = _ODD_WS.search(text)
    if found:
        return f"'{_snippet(text, found.start(), found.end())}' has {describe_whitespace(found.group())}"
    return None


def why_exact_fails(answer: str, response: str | None) -> str | None:
    """One sentence when exact fails only because of whitespace or an invisible character (it would
    pass with the whitespace collapsed and zero-width or format characters removed); None when
    exact passes, the response is blank, or the difference is a visible one."""
    if response is None or is_blank(response) or not answer.strip() or exact_substring(answer, response):
        return None
    a, r = answer.lower(), response.lower()
    if _WS.sub(" ", a).strip() in _WS.sub(" ", r):
        golden = _odd(answer, whole=True)
        if golden:
            return _PREFIX + golden + "."
        words = [re.escape(w) for w in a.split()]
        match = re.search(r"\s+".join(words), r)
        if match:
            odd = _odd(response[match.start() : match.end()], whole=False)
            if odd:
                return _PREFIX + "the response writes " + odd.replace("' has ", "' with ", 1) + "."
        return None
    na, nr = normalize_text(answer).lower(), normalize_text(response).lower()
    if na.strip() and _WS.sub(" ", na).strip() in _WS.sub(" ", nr):
        hidden = [ch for ch in answer + response if unicodedata.category(ch) == "Cf" or ord(ch) == 0x00AD]
        where = "golden answer" if any(ch in answer for ch in hidden) else "response"
        if hidden:
            return f"{_PREFIX}the {where} holds an invisible character ({_name(hidden[0])})."
        return f"{_PREFIX}the two texts write the same letters with different Unicode code points (normalisation)."
    return None
