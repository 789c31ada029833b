"""Untrusted text inside Markdown, read literally: the one escape the pages' Markdown elements and
the report's Markdown file share.

Dataset text (a model's name, a domain, a reviewer's note) rendered as Markdown can make a reader's
program fetch a URL (``![x](http://host/p.png)``) or turn into a link or a heading; escaping every
ASCII punctuation character leaves it plain text in any Markdown reader.
"""

from __future__ import annotations

_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$&:\"'=^@%;,/?")


def md_escape(text: str) -> str:
    """Backslash-escape every ASCII punctuation character so Markdown renders the text literally.

    For messages that must go through a Markdown element (``st.error``, ``st.warning``) but
    contain dataset text such as column names, and for the cells of a Markdown file:
    ``![x](http://host/p.png)`` stays text and makes the reader fetch nothing. A line break is
    Markdown's hard break (two spaces, then the newline).
    """
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text).replace("\n", "  \n")


#: What can make Markdown do more than show text: emphasis, code, links and images, raw HTML and
#: entities, headings, tables, strike-through.
_MD_ACTIVE = set("\\`*_{}[]()<>#+!|~&")


def md_text(text: str) -> str:
    """``text`` as one line of a Markdown file that reads as itself in any reader and in the raw
    file: every character of :data:`_MD_ACTIVE` backslash-escaped, the rest (``.``, ``:``, ``%``,
    ``-``) left readable; line breaks become spaces (a cell, a list item or a paragraph is one
    line). For a file people also read raw (the team's report); :func:`md_escape` is the stricter
    one for the pages' Markdown elements."""
    return "".join("\\" + ch if ch in _MD_ACTIVE else ch for ch in " ".join(text.split()))
