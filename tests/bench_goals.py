"""Goal lines for the bench scripts, and the runner behind ``make bench``.

Every goal a bench script checks is printed as exactly one line, in one format::

    GOAL  cli whole-process speed-up              23.4x   goal >= 20x       ok

(what, the figure, the goal, and ``ok``, ``short`` or ``failed`` when it could not be measured).
:func:`goal` prints such a line and, when the environment variable ``BENCH_GOALS_FILE`` names a
file, appends it there too.

Run as a script, this module is the runner::

    .venv/bin/python tests/bench_goals.py tests/bench_scoring.py "tests/bench_dashboard.py --quick" ...

It runs each bench script (an argument may carry the script's own flags) one after the other as a
subprocess, its output passing through, so a short goal or a crash in one does not stop the
others. Scripts that do not write goal lines themselves (older ones) have their printed goals
translated into the same format (:data:`ADAPTERS`). At the end it prints every goal line together,
then each script's exit status. Exit status: the first crash's own status if a script crashed
(non-zero without having reported a short goal, or killed by a signal), else 1 if a goal is short,
else 0.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "BENCH_GOALS_FILE"
PREFIX = "GOAL  "
OK, SHORT, FAILED = "ok", "short", "failed"


def fmt_number(value: float, unit: str = "") -> str:
    """A figure with its unit: ``23.4x``, ``1.23x``, ``0.81 GiB``, ``812 MiB``, ``13.40 s``, ``0``."""
    if unit == "x":
        return f"{value:.2f}x" if abs(value) < 10 else f"{value:.1f}x"
    if unit == "GiB":
        return f"{value:.2f} GiB"
    if unit == "s":
        return f"{value:.2f} s"
    text = f"{value:.0f}" if unit in ("MiB", "ms") else f"{value:g}"
    return f"{text} {unit}".rstrip()


def fmt_target(target: float, unit: str = "") -> str:
    """A goal's threshold: ``20x``, ``1 GiB``, ``0``."""
    return f"{target:g}x" if unit == "x" else f"{target:g} {unit}".rstrip()


def goal_line(what: str, figure: str, goal_text: str, status: str) -> str:
    """One goal in the common format (no I/O)."""
    return f"{PREFIX}{what:<48} {figure:>10}   goal {goal_text:<10} {status}"


def emit(line: str) -> None:
    """Print a goal line and append it to ``$BENCH_GOALS_FILE`` if that is set."""
    print(line, flush=True)
    target = os.environ.get(ENV_VAR)
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _meets(value: float, op: str, target: float) -> bool:
    return {
        ">=": value >= target,
        "<=": value <= target,
        "<": value < target,
        ">": value > target,
        "==": value == target,
    }[op]


def goal(what: str, value: float | None, op: str, target: float, unit: str = "", stretch: float | None = None) -> bool:
    """Check ``value op target`` (op one of ``>=``, ``<=``, ``<``, ``>``, ``==``), print its goal
    line and return whether it is met. ``value=None`` means it could not be measured (``failed``).
    ``stretch``: a moonshot target, reported after the status; it does not decide ok/short."""
    goal_text = f"{op} {fmt_target(target, unit)}"
    if value is None:
        emit(goal_line(what, "n/a", goal_text, FAILED))
        return False
    met = _meets(value, op, target)
    line = goal_line(what, fmt_number(value, unit), goal_text, OK if met else SHORT)
    if stretch is not None:
        line += f"   (moonshot {op} {fmt_target(stretch, unit)}: {'met' if _meets(value, op, stretch) else 'not yet'})"
    emit(line)
    return met


def status_of(line: str) -> str:
    """``ok``, ``short`` or ``failed``: the first word after the goal column."""
    m = re.search(r"   goal \S+(?: \S+)*? +(ok|short|failed)(?:\s|$)", line)
    return m.group(1) if m else ""


# --- the runner ---------------------------------------------------------------------------------


def _number(text: str) -> float:
    return float(re.sub(r"[^0-9.\-]", "", text))


def _adapt_judge(out: str) -> list[str]:
    lines = []
    m = re.search(r"speed-up batch vs serial:\s*([\d.]+)x \(goal >= ([\d.]+)x\)", out)
    if m:
        value, target = float(m.group(1)), float(m.group(2))
        lines.append(
            goal_line(
                "judge batch vs serial speed-up", f"{value:.1f}x", f">= {target:g}x", OK if value >= target else SHORT
            )
        )
    m = re.search(r"labels agree serial/batch: (\w+); cached labels identical: (\w+)", out)
    if m:
        good = m.group(1) == "True" and m.group(2) == "True"
        lines.append(
            goal_line(
                "judge labels agree (serial, batch, cached)", "yes" if good else "no", "yes", OK if good else SHORT
            )
        )
    m = re.search(r"cached re-run:.*?\((?:[^,]*), (\d+) requests", out)
    if m:
        sent = int(m.group(1))
        lines.append(goal_line("judge cached re-run requests", str(sent), "== 0", OK if sent == 0 else SHORT))
    return lines


def _adapt_review_browser(out: str) -> list[str]:
    m = re.search(r"ratio 100k/1k \(median\): ([\d.]+)\s+\(goal <= ([\d.]+)", out)
    if not m:
        return []
    value, target = float(m.group(1)), float(m.group(2))
    return [
        goal_line(
            "review key press 100k/1k (browser)", f"{value:.2f}x", f"<= {target:g}x", OK if value <= target else SHORT
        )
    ]


def _adapt_memory(out: str) -> list[str]:
    m = re.search(r"bounded after (\d+) MiB vs goal <= (\d+): (\w+)", out)
    if not m:
        return []
    return [
        goal_line(
            "server RSS, bounded cache (bench_memory)",
            f"{m.group(1)} MiB",
            f"<= {m.group(2)} MiB",
            OK if m.group(3) == "ok" else SHORT,
        )
    ]


def _adapt_upload(out: str) -> list[str]:
    """bench_upload prints a table, no verdict; its goal (issue 8): longest write-lock hold about
    100 ms, mark p99 under 1 s, no mark lost, for the project's way (``short transactions``)."""
    row = next((ln for ln in out.splitlines() if ln.startswith("short transactions") and len(ln.split()) >= 12), None)
    if row is None:
        return []
    cells = row.split()[2:]  # save s, write s, txns, max hold ms, probe ms, marks, p50, p99, max, not saved
    try:
        hold, p99, lost = _number(cells[3]), _number(cells[7]), int(_number(cells[9]))
    except (IndexError, ValueError):
        return []
    return [
        goal_line("upload longest write-lock hold", f"{hold:.0f} ms", "<= ~100 ms", OK if hold <= 100 else SHORT),
        goal_line("upload: mark p99 beside a save", f"{p99:.0f} ms", "< 1000 ms", OK if p99 < 1000 else SHORT),
        goal_line("upload: marks not saved", str(lost), "== 0", OK if lost == 0 else SHORT),
    ]


#: Older scripts that print their goals their own way: script stem -> translator of its stdout.
ADAPTERS: dict[str, Callable[[str], list[str]]] = {
    "bench_judge": _adapt_judge,
    "bench_review_browser": _adapt_review_browser,
    "bench_memory": _adapt_memory,
    "bench_upload": _adapt_upload,
}


@dataclass
class Outcome:
    command: list[str]
    returncode: int
    goals: list[str]
    crashed: bool
    note: str


def _pump(src, dst, keep: list[str]) -> None:  # noqa: ANN001  (binary pipe, text stream)
    for raw in iter(src.readline, b""):
        text = raw.decode("utf-8", errors="replace")
        dst.write(text)
        dst.flush()
        keep.append(text)
    src.close()


def run_one(spec: str) -> Outcome:
    """Run one bench script (``spec``: its path, optionally followed by its flags)."""
    args = shlex.split(spec)
    command = [sys.executable, *args]
    stem = Path(args[0]).stem
    with tempfile.NamedTemporaryFile("r", suffix=".goals", delete=False, encoding="utf-8") as tmp:
        goals_path = Path(tmp.name)
    env = {**os.environ, ENV_VAR: str(goals_path), "PYTHONUNBUFFERED": "1"}
    print(f"\n===== {' '.join(args)}", flush=True)
    out: list[str] = []
    err: list[str] = []
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    pumps = [
        threading.Thread(target=_pump, args=(process.stdout, sys.stdout, out), daemon=True),
        threading.Thread(target=_pump, args=(process.stderr, sys.stderr, err), daemon=True),
    ]
    for t in pumps:
        t.start()
    returncode = process.wait()
    for t in pumps:
        t.join()
    goals = [ln.rstrip("\n") for ln in goals_path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    goals_path.unlink(missing_ok=True)
    note = ""
    if not goals and stem in ADAPTERS:
        goals = ADAPTERS[stem]("".join(out))
        note = "goal lines read from its output"
    if not goals:
        goals = [goal_line(f"{stem}: no goal line found", "n/a", "see output", FAILED)]
    short = any(status_of(g) == SHORT for g in goals)
    traceback = any(ln.startswith("Traceback (most recent call last)") for ln in err)
    crashed = returncode < 0 or returncode >= 2 or (returncode == 1 and (traceback or not short))
    if crashed:
        last = next((ln.strip() for ln in reversed(err) if ln.strip()), "")
        note = f"CRASHED: {last[:200]}" if last else "CRASHED"
    return Outcome(command, returncode, goals, crashed, note)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    outcomes = [run_one(spec) for spec in argv]
    print("\n===== goals")
    for outcome in outcomes:
        for line in outcome.goals:
            print(line)
    print("\n===== scripts")
    for outcome in outcomes:
        shown = " ".join(outcome.command[1:])
        print(f"exit {outcome.returncode:>3}  {shown}" + (f"  ({outcome.note})" if outcome.note else ""))
    crashes = [o for o in outcomes if o.crashed]
    if crashes:
        code = crashes[0].returncode
        return code if code > 0 else 128 - code  # a signal: the shell's convention, 128 + signal number
    return 1 if any(status_of(g) in (SHORT, FAILED) for o in outcomes for g in o.goals) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
