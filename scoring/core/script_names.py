"""The scripts a row can be named by when nothing names its language (:mod:`scoring.core.row_language`),
in the order a tie between them is broken; the compiled counter
(:mod:`scoring.core.script_kernel`) codes them by this order."""

from __future__ import annotations

LATIN, UNKNOWN_SCRIPT, OTHER_SCRIPT = "Latin", "Unknown script", "Other script"
#: The Indic blocks, each 128 code points from U+0900 on, in Unicode order (block = code point >> 7).
INDIC_BLOCKS = (
    "Devanagari",
    "Bengali script",
    "Gurmukhi",
    "Gujarati script",
    "Odia script",
    "Tamil script",
    "Telugu script",
    "Kannada script",
    "Malayalam script",
)
ARABIC = "Arabic script"
#: Every script a row can be named by, in the order a tie is broken (Indic first, then Latin).
SCRIPTS = (*INDIC_BLOCKS, LATIN, ARABIC, OTHER_SCRIPT)
