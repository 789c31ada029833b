"""The character sets the protocols depend on, taken from the running Python, cached on disk.

Building them means asking Python about each of the 1,114,112 code points (category ``P*``,
``str.isspace``, what ``str.lower()`` changes, category ``Cn``): about 0.8 s, which a command
scoring a million rows in two seconds should not pay every time. They are stored as code point
ranges in a JSON file named after the Python and Unicode versions, so a different Python (or
Unicode database) computes and stores its own. A missing, unreadable or unwritable cache only
costs the time: the sets are computed again, never guessed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import string
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from scoring.core.settings import lookup

Ranges = list[tuple[int, int]]
T = TypeVar("T")
#: Bump when what is stored changes, so an old file is never read as the new kind.
FORMAT = 1
NAMES = ("punctuation", "whitespace", "cased", "unassigned")
CACHE_ENV = "SCORING_CACHE_DIR"  #: a setting read from the environment only (scoring.core.settings)


def cache_path() -> Path:
    """``$SCORING_CACHE_DIR``, else ``$XDG_CACHE_HOME/answer-review``, else the temp folder."""
    base = lookup(CACHE_ENV) or os.path.join(os.environ.get("XDG_CACHE_HOME") or tempfile.gettempdir(), "answer-review")
    version = f"py{sys.version_info.major}.{sys.version_info.minor}-unicode{unicodedata.unidata_version}"
    return Path(str(base)) / f"unicode-tables-{version}-v{FORMAT}.json"


def runs(flags: bytes | bytearray) -> Ranges:
    """Inclusive ranges of the code points whose flag byte is 1 (found by ``re``, in C)."""
    return [(m.start(), m.end() - 1) for m in re.finditer(b"\x01+", flags)]


def chars(ranges: Ranges) -> str:
    return "".join(chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1))


def compute() -> dict[str, Ranges]:
    """Every set from scratch, as ranges: what the cache file holds."""
    every = range(sys.maxunicode + 1)
    categories = list(map(unicodedata.category, map(chr, every)))
    punct = bytearray(c.startswith("P") for c in categories)
    for ch in string.punctuation:  # ASCII symbols such as + $ < = > ^ | ~ ` are not category P
        punct[ord(ch)] = 1
    cased = bytearray(len(every))
    for start in range(0, len(every), 512):  # most blocks have no cased character at all
        block = "".join(map(chr, range(start, min(start + 512, len(every)))))
        if block.lower() != block:
            for ch in block:
                if ch.lower() != ch:
                    cased[ord(ch)] = 1
    return {
        "punctuation": runs(punct),
        "whitespace": runs(bytes(map(str.isspace, map(chr, every)))),
        "cased": runs(cased),
        "unassigned": runs(bytes(map("Cn".__eq__, categories))),
    }


def _read(path: Path) -> dict[str, Ranges] | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        return {name: [(int(lo), int(hi)) for lo, hi in stored[name]] for name in NAMES}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a concurrent reader sees the old file or the whole new one;
    a cache that cannot be written only costs the time to build it again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        temp.write_bytes(data)
        temp.replace(path)
    except OSError:
        pass


def cached_on_disk(
    path: Path, read: Callable[[Path], T | None], build: Callable[[], T], encode: Callable[[T], bytes]
) -> T:
    """What ``read`` finds at ``path``, else ``build()``, stored there (``encode``) for next time."""
    found = read(path)
    if found is None:
        found = build()
        write_atomically(path, encode(found))
    return found


@functools.cache
def tables() -> dict[str, Ranges]:
    """The sets as code point ranges: from the cache file when present, else computed and stored."""
    return cached_on_disk(cache_path(), _read, compute, lambda found: json.dumps(found).encode("utf-8"))
