"""How numbers read on the pages and in reports: one place, so every page says 64.6%, not 0.6463.

Pure functions (no streamlit): the dashboard pages and the CLI report both call them. A missing
figure (None or NaN: precision with no reviewed rows, kappa with one label only) reads "—",
never "None" or "nan".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MISSING = "—"
#: Smallest p-value printed as a number; anything below reads "p < 0.0001" (an exact test's
#: tiny tail underflows to 0.0 at large counts, and "p = 0" claims a certainty no test gives).
P_FLOOR = 1e-4


def is_missing(x: Any) -> bool:
    """None, NaN and pandas' NA/NaT: values a table must show as missing, not as text."""
    if x is None:
        return True
    try:
        return bool(x != x)  # only NaN-like values differ from themselves
    except (TypeError, ValueError):  # pd.NA refuses bool()
        return True


def maybe(x: Any, fmt: Callable[[Any], str] = str) -> str:
    """``fmt(x)``, or "—" when ``x`` is missing."""
    return MISSING if is_missing(x) else fmt(x)


def percent(x: float | None, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage with ``digits`` decimals: 0.6463 -> "64.6%"; None -> "—"."""
    if is_missing(x):
        return MISSING
    return f"{float(x):.{digits}%}"


def share(k: int, n: int, digits: int = 1) -> str:
    """``k`` of ``n`` as a percentage; "—" when ``n`` is 0 (no rows: no share to speak of)."""
    return percent(k / n if n else None, digits)


def interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """A confidence interval as "39.1% to 86.2%" (the wording the Overview has always used)."""
    if is_missing(low) or is_missing(high):
        return MISSING
    return f"{percent(low, digits)} to {percent(high, digits)}"


def p_value(p: float | None) -> str:
    """ "p = 0.5811" (four significant digits, never scientific), "p < 0.0001" below the floor,
    "p = —" when there is no p-value."""
    if is_missing(p):
        return f"p = {MISSING}"
    p = float(p)
    if p < P_FLOOR:
        return "p < 0.0001"
    return f"p = {p:.4g}"


def decimal(x: float | None, digits: int = 3) -> str:
    """A statistic that is not a share (Cohen's kappa) with fixed decimals; None -> "—"."""
    return maybe(x, lambda v: f"{float(v):.{digits}f}")


#: Where each phase of a long job starts on its progress bar (the rest of the bar is its own).
PHASES = {
    "reading": (0.0, "Reading the file"),
    "scoring": (0.15, "Scoring"),
    "saving": (0.4, "Saving"),
    "loading": (0.0, "Loading the rows"),
    "verdicts": (0.3, "Joining the verdicts"),
    "writing": (0.6, "Writing"),
}
PHASE_ORDER = {"upload": ("reading", "scoring", "saving"), "export": ("loading", "verdicts", "writing")}


def phase_progress(job: str, phase: str, done: int, total: int) -> tuple[float, str]:
    """A long job's bar position in [0, 1] and its text: "Saving 120,000 of 1,000,000 rows".

    ``job`` is "upload" or "export"; each phase fills the bar from its start to the next one's.
    """
    order = PHASE_ORDER[job]
    start, label = PHASES[phase]
    after = order.index(phase) + 1
    end = PHASES[order[after]][0] if after < len(order) else 1.0
    fraction = start + (end - start) * (done / total if total else 0.0)
    if total and (done or phase in ("saving", "writing")):
        return fraction, f"{label} {done:,} of {total:,} rows"
    return fraction, f"{label} {total:,} rows" if total else label
