"""Which languages the stemmed word overlap stems (:mod:`scoring.match.stem_overlap`).

Plain names and a lookup, apart from the stemmer itself, so a report or a page can say which rows
are stemmed without loading the matchers.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

#: Language as written (lower case; a BCP 47 tag such as ``hi-IN`` is read by its first part) ->
#: Snowball algorithm. Everything else is not stemmed.
STEMMERS: dict[str, str] = {
    **dict.fromkeys(("english", "en", "eng"), "english"),
    **dict.fromkeys(("hindi", "hi", "hin", "हिन्दी", "हिंदी"), "hindi"),
    **dict.fromkeys(("tamil", "ta", "tam", "தமிழ்"), "tamil"),
    **dict.fromkeys(("nepali", "ne", "nep", "npi", "नेपाली"), "nepali"),
}
#: The languages stemmed, as the CLI help and the page name them.
STEMMED_LANGUAGES = ("English", "Hindi", "Tamil", "Nepali")
NOT_STEMMED_NOTE = (
    "stemmed word overlap stems English, Hindi, Tamil and Nepali only (snowballstemmer); rows in any "
    "other language, or whose language is only a script name, are not stemmed (their verdict is the "
    "spec's word overlap)"
)


def algorithm(language: str | None) -> str | None:
    """The Snowball algorithm for ``language`` (a name, an ISO code or a BCP 47 tag), or None."""
    key = (language or "").strip().lower()
    if key in STEMMERS:
        return STEMMERS[key]
    head = key.replace("_", "-").split("-")[0]
    return STEMMERS.get(head) if "-" in key.replace("_", "-") else None


def stemmed(language: str | None) -> bool:
    """Whether rows in ``language`` are stemmed (else the verdict is the spec's word overlap)."""
    return algorithm(language) is not None


def stemming_by_language(languages: pl.Series | Iterable[str | None]) -> dict[str, bool]:
    """Each distinct language (as written; "" for none) and whether its rows are stemmed."""
    values = (
        languages.cast(pl.String).fill_null("").unique().to_list() if isinstance(languages, pl.Series) else languages
    )
    return {str(v or ""): stemmed(v) for v in sorted({str(v or "") for v in values})}
