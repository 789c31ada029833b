"""Highlighted HTML for a response: which golden words matched, where the exact match sits.

Dataset text is untrusted, so every piece of text is passed through ``html.escape`` before it
is wrapped in markup; the only tags in the output are the ones written here.
"""

from __future__ import annotations

import html

from scoring.core.protocols import iter_tokens, missing_golden_words, word_set

EXACT_STYLE = "background:#fde68a;border-radius:3px"
WORD_STYLE = "background:#bbf7d0;border-radius:3px"


def exact_span(answer: str, response: str) -> tuple[int, int] | None:
    """Span of the first case-insensitive occurrence of the golden answer in the response.

    ``lower()`` can change a string's length (``İ``); then positions in the lowered text do not
    map back to the original and no span is claimed.
    """
    if not answer or not response:
        return None
    lowered = response.lower()
    if len(lowered) != len(response) or len(answer.lower()) != len(answer):
        return None
    start = lowered.find(answer.lower())
    return None if start < 0 else (start, start + len(answer))


def highlight_response(answer: str, response: str) -> str:
    """The response as safe HTML: matched golden words green, the exact-substring match amber."""
    golden = word_set(answer)
    span = exact_span(answer, response)
    marks: list[tuple[int, int, str]] = []
    if span:
        marks.append((span[0], span[1], EXACT_STYLE))
    for start, end, token in iter_tokens(response):
        if token in golden and not (span and start < span[1] and end > span[0]):
            marks.append((start, end, WORD_STYLE))
    marks.sort()
    out: list[str] = []
    pos = 0
    for start, end, style in marks:
        out.append(html.escape(response[pos:start]))
        out.append(f'<span style="{style}">{html.escape(response[start:end])}</span>')
        pos = end
    out.append(html.escape(response[pos:]))
    return "".join(out)


def highlight_golden(answer: str, response: str) -> str:
    """The golden answer as safe HTML with the words the response lacks struck through."""
    missing = set(missing_golden_words(answer, response))
    out: list[str] = []
    pos = 0
    for start, end, token in iter_tokens(answer):
        out.append(html.escape(answer[pos:start]))
        piece = html.escape(answer[start:end])
        out.append(f"<s>{piece}</s>" if token in missing else f'<span style="{WORD_STYLE}">{piece}</span>')
        pos = end
    out.append(html.escape(answer[pos:]))
    return "".join(out)


def text_block(text: str) -> str:
    """Plain text as safe HTML that keeps line breaks and spacing."""
    return f'<div style="white-space:pre-wrap">{html.escape(text)}</div>'
