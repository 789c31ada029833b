"""A run's model and language guessed from its file's name (``my_model_hindi.csv``)."""

from __future__ import annotations

import re
from pathlib import Path

LANGUAGES = (
    "english",
    "hindi",
    "tamil",
    "bengali",
    "bangla",
    "telugu",
    "marathi",
    "gujarati",
    "kannada",
    "malayalam",
    "odia",
    "oriya",
    "punjabi",
    "assamese",
    "urdu",
    "sanskrit",
    "nepali",
    "konkani",
    "maithili",
    "sindhi",
    "kashmiri",
    "manipuri",
    "bodo",
    "dogri",
    "santali",
)


def guess_model_language(filename: str) -> tuple[str, str]:
    """``my_model_hindi.csv`` -> (``my_model``, ``Hindi``); unknown parts leave the language empty."""
    stem = Path(filename).stem
    parts = [p for p in re.split(r"[_\-\s.]+", stem) if p]
    language = ""
    for i, part in enumerate(parts):
        if part.lower() in LANGUAGES:
            language = part.capitalize()
            parts = parts[:i] + parts[i + 1 :]
            break
    return "_".join(parts), language
