"""One name per language: ``hi``, ``hin``, ``Hindi`` and `` HINDI `` are all "Hindi".

A row's language is typed by people and written by tools (ISO 639-1 and 639-3 codes, BCP 47 tags
such as ``hi-IN``, names in any case), and a per-language figure must not split one language into
four. The table covers English and the languages of India's Eighth Schedule (with Nepali); any
other value is kept as typed, trimmed: a value this table does not know is not ours to rename.
"""

from __future__ import annotations

import polars as pl

#: Canonical name -> the names and codes that mean it (lower case; ISO 639-1, then 639-3 and
#: other spellings in use).
_NAMES: dict[str, tuple[str, ...]] = {
    "English": ("en", "eng"),
    "Hindi": ("hi", "hin"),
    "Tamil": ("ta", "tam"),
    "Bengali": ("bn", "ben", "bangla"),
    "Telugu": ("te", "tel"),
    "Marathi": ("mr", "mar"),
    "Gujarati": ("gu", "guj"),
    "Kannada": ("kn", "kan"),
    "Malayalam": ("ml", "mal"),
    "Odia": ("or", "ori", "ory", "oriya"),
    "Punjabi": ("pa", "pan", "panjabi"),
    "Assamese": ("as", "asm"),
    "Urdu": ("ur", "urd"),
    "Sanskrit": ("sa", "san"),
    "Nepali": ("ne", "nep", "npi"),
    "Konkani": ("kok", "gom"),
    "Maithili": ("mai",),
    "Sindhi": ("sd", "snd"),
    "Kashmiri": ("ks", "kas"),
    "Manipuri": ("mni", "meitei"),
    "Bodo": ("brx",),
    "Dogri": ("doi",),
    "Santali": ("sat",),
}
#: Every lower-case spelling the table knows -> its canonical name.
CANONICAL_LANGUAGES: dict[str, str] = {
    spelling: name for name, codes in _NAMES.items() for spelling in (name.lower(), *codes)
}
#: A tag such as ``hi-IN``, ``en_US`` or ``pa-Guru``: its first subtag names the language.
_TAG = r"^([a-z]{2,3})[-_][a-z0-9]{2,8}$"
#: A run language that lists several (``English, Hindi``) names no one row's language.
_SEVERAL = r"[,;/|+&]| and "


def normalise_languages(values: pl.Expr) -> pl.Expr:
    """Trimmed; a name or code of the table as its canonical name (a tag by its first subtag);
    any other value as typed, trimmed; null as ""."""
    trimmed = values.fill_null("").str.strip_chars()
    key = trimmed.str.to_lowercase()
    known = key.replace_strict(CANONICAL_LANGUAGES, default=None, return_dtype=pl.String)
    tagged = key.str.extract(_TAG, 1).replace_strict(CANONICAL_LANGUAGES, default=None, return_dtype=pl.String)
    return pl.coalesce(known, tagged, trimmed)


def normalise_language_column(values: pl.Series) -> pl.Series:
    """:func:`normalise_languages` of a column, worked out once per distinct value (a million
    rows hold a handful: a tenth of the time)."""
    values = values.cast(pl.String).fill_null("")
    distinct = values.unique()
    named = pl.select(normalise_languages(pl.lit(distinct))).to_series()
    return values.replace_strict(distinct, named, return_dtype=pl.String)


def normalise_language(value: str | None) -> str:
    """:func:`normalise_languages` of one value."""
    return pl.select(normalise_languages(pl.lit(value or "", dtype=pl.String))).item()


def one_language(value: str | None) -> str:
    """The run language ``value`` normalised when it names one language; "" when it is blank or
    lists several (the bundled sample's ``English, Hindi, Tamil, Bengali``)."""
    text = (value or "").strip()
    if not text or pl.select(pl.lit(text).str.contains(_SEVERAL)).item():
        return ""
    return normalise_language(text)


def languages_label(languages: list[str], shown: int = 3) -> str:
    """How a run holding several languages is named: ``English, Hindi, Tamil``, or ``5 languages``
    past ``shown`` of them; "" for none."""
    names = sorted({name for name in languages if name}, key=str.lower)
    if len(names) > shown:
        return f"{len(names)} languages"
    return ", ".join(names)
