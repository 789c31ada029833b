"""Benchmark: scoring a responses file, the project against a naive ``DataFrame.apply(axis=1)``.

Not collected by pytest (the name does not start with ``test_``). Run it as::

    .venv/bin/python tests/bench_scoring.py [--rows N] [--seed S] [--whole-only]

It generates N synthetic rows (default 1,000,000; half English, half Devanagari; golden answers
drawn from a few thousand phrases; responses of 3-30 words that contain, rearrange, inflect or
miss the golden words, with punctuation and dandas) and writes them once to a temporary file.

1. Whole processes (issue 10), what a user waits for. Timed as subprocesses from the repository
   root, wall clock from start to exit, peak RSS of each child from ``os.wait4``:

   * the project: ``python -m scoring score --responses F --out G`` (median of 3 runs);
   * the naive script ``tests/naive_score.py F G`` (``pd.read_csv``, one ``apply(axis=1)`` for
     both protocols, ``to_csv``), once by default: at a million rows it takes about a minute,
     long enough that one run is steady.

   The two output files must agree on ``exact_correct`` and ``overlap_correct`` (compared as the
   strings ``True``/``False``) on every row. Goals: speed-up >= 20x (moonshot 30x), the
   project's peak RSS < 1 GiB.

   The naive script reads with pandas' defaults, as the spec's scripts do; in pandas 3 that is
   Arrow-backed ``str`` columns, over which ``apply(axis=1)`` is about 2.8x slower than over
   Python objects. So the same script is also run once with ``--object`` (``dtype=object``, what
   pandas before 3 gave) and the speed-up against it printed beside the goal, not judged
   (``--no-object-baseline`` skips it).

2. In memory (skipped with ``--whole-only``): the rows loaded through ``scoring.core.loader`` like
   a real file, ``scoring.core.report.score_frame`` (both metrics; median of 3) against the naive
   ``apply`` on the frame the spec's scripts read (``pd.read_csv``); both must agree on every row.
   Goal (issue 2): speed-up >= 30x, this process's peak RSS < 2 GiB. Then
   ``scoring.core.columnar.score_polars`` on the same rows read with
   ``pl.read_csv(infer_schema=False)``: its median wall time against ``score_frame``'s, and every
   row of every output column must agree with ``score_frame``'s.

Every goal prints one ``GOAL`` line (``tests/bench_goals.py``). Exit status 1 if a goal is short
or the outputs disagree (the moonshot does not count).
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_goals import goal  # noqa: E402
from naive_score import naive_score  # noqa: E402

NAIVE_SCRIPT = ROOT / "tests" / "naive_score.py"
GOAL_WHOLE_SPEEDUP = 20.0
MOONSHOT_WHOLE_SPEEDUP = 30.0
GOAL_WHOLE_PEAK_GIB = 1.0
GOAL_SPEEDUP = 30.0  # in memory (issue 2)
GOAL_PEAK_GIB = 2.0  # in memory (issue 2)
VERDICTS = ["exact_correct", "overlap_correct"]

# ---------------------------------------------------------------- synthetic data

LATIN_SYLLABLES = [c + v for c in "bcdghjklmnprstvy" for v in ("a", "i", "u", "e", "o", "aa", "ai")]
DEVA_CONSONANTS = [chr(cp) for cp in range(0x0915, 0x0939 + 1)]
DEVA_SIGNS = ["", "\u093e", "\u093f", "\u0940", "\u0941", "\u0947", "\u0948", "\u094b", "\u0902"]
EN_FILLER = "the answer is it was a of in and not this that which I believe probably called known as".split()
HI_FILLER = "यह उत्तर है था की के में और नहीं जो कहा जाता मेरे विचार से शायद".split()
EN_SUFFIXES = ["s", "a", "ic", "ed"]
HI_SUFFIXES = ["ों", "ी", "े", "ा"]
DOMAINS = ["Art", "History", "Geography", "Literature", "कला", "इतिहास"]


def _latin_word(rng: random.Random) -> str:
    word = "".join(rng.choice(LATIN_SYLLABLES) for _ in range(rng.randint(2, 4)))
    return word.capitalize() if rng.random() < 0.4 else word


def _deva_word(rng: random.Random) -> str:
    return "".join(rng.choice(DEVA_CONSONANTS) + rng.choice(DEVA_SIGNS) for _ in range(rng.randint(2, 4)))


def _phrases(rng: random.Random, word, count: int) -> list[list[str]]:
    vocab = [word(rng) for _ in range(3000)]
    return [[rng.choice(vocab) for _ in range(rng.choice((1, 1, 2, 2, 2, 3, 4)))] for _ in range(count)]


def _decorate(rng: random.Random, token: str, devanagari: bool) -> str:
    """Punctuation that the word-overlap protocol strips (and sometimes some that it does not)."""
    r = rng.random()
    if r < 0.06:
        return token + ("।" if devanagari else ".")
    if r < 0.10:
        return token + ","
    if r < 0.12:
        return f"“{token}”"
    if r < 0.13:
        return f"({token})"
    if r < 0.14:
        return token + "-x"  # inner punctuation: not stripped, so the token no longer matches
    return token


def _response(rng: random.Random, golden: list[str], devanagari: bool) -> str:
    filler = HI_FILLER if devanagari else EN_FILLER
    suffixes = HI_SUFFIXES if devanagari else EN_SUFFIXES
    kind = rng.random()
    if kind < 0.01:
        return rng.choice(["", " ", "  \t"])
    n_fill = rng.randint(max(0, 3 - len(golden)), max(0, 30 - len(golden)))
    words = [rng.choice(filler) for _ in range(n_fill)]
    gold = list(golden)
    if not devanagari and rng.random() < 0.5:
        gold = [w.upper() if rng.random() < 0.2 else w.lower() for w in gold]
    if kind < 0.40:  # verbatim phrase somewhere in the prose
        pos = rng.randint(0, len(words))
        phrase = " ".join(gold)
        words.insert(pos, _decorate(rng, phrase, devanagari))
    elif kind < 0.60:  # rearranged: every word present, not contiguous
        rng.shuffle(gold)
        for w in gold:
            words.insert(rng.randint(0, len(words)), _decorate(rng, w, devanagari))
    elif kind < 0.75:  # inflected: golden string inside a longer word
        for w in gold:
            words.insert(rng.randint(0, len(words)), w + rng.choice(suffixes))
    elif kind < 0.90 and len(gold) > 1:  # one golden word missing
        gold.pop(rng.randrange(len(gold)))
        for w in gold:
            words.insert(rng.randint(0, len(words)), _decorate(rng, w, devanagari))
    # else: the golden answer is absent altogether
    if words and rng.random() < 0.5:
        words[-1] = words[-1] + ("।" if devanagari else ".")
    return " ".join(words)


def generate_csv(rows: int, seed: int) -> bytes:
    """A responses file as UTF-8 bytes: question, answer, Domain, response."""
    rng = random.Random(seed)
    en = _phrases(rng, _latin_word, 3000)
    hi = _phrases(rng, _deva_word, 3000)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["question", "answer", "Domain", "response"])
    for i in range(rows):
        devanagari = i % 2 == 1
        golden = rng.choice(hi if devanagari else en)
        answer = " ".join(golden)
        if rng.random() < 0.005:
            answer += " "  # the spec's "golden answer is not stripped" case
        writer.writerow([f"q{i}", answer, rng.choice(DOMAINS), _response(rng, golden, devanagari)])
    return buf.getvalue().encode("utf-8")


# ---------------------------------------------------------------- measuring


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def gib(n: float) -> str:
    return f"{n / 1024**3:.2f} GiB"


@dataclass(frozen=True)
class Child:
    """One finished subprocess: wall seconds, peak RSS in bytes, exit code, its stderr's tail."""

    wall: float
    peak: int
    returncode: int
    stderr: str


#: ``python -S -c LAUNCHER RESULT CMD...``: runs CMD (a fork and an exec, stdio inherited), waits
#: for it with ``os.wait4`` and writes ``"<wall seconds> <peak RSS bytes>"`` to RESULT; exits with
#: CMD's status (128 + the signal's number if a signal killed it). A child started straight from a
#: bench reports the bench's own RSS as its floor: ``subprocess`` starts it with vfork (or fork),
#: and Linux carries the memory it exec'd from into its ``ru_maxrss`` (``python -c pass`` read
#: 969 MiB beside a 969 MiB bench). The launcher is small, so the floor is about 8 MiB.
LAUNCHER = """
import os, sys, time
result, *cmd = sys.argv[1:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    except OSError as exc:
        sys.stderr.write(f"cannot run {cmd[0]}: {exc}\\n")
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(result, "w") as fh:
    fh.write(f"{wall!r} {usage.ru_maxrss * 1024}")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_child(cmd: list[str], stdout: Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Child:
    """Run ``cmd`` to completion; stdout goes to the file ``stdout``.

    Wall time and peak RSS are the child's own, from ``os.wait4`` in :data:`LAUNCHER` (per child,
    unlike ``RUSAGE_CHILDREN``, the largest over all children so far; a grandchild it reaped counts
    if larger), wall time from just before the fork to the reap.
    """
    with stdout.open("wb") as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "wait4.txt"
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-S", "-c", LAUNCHER, str(result), *cmd], cwd=cwd, env=env, stdout=out, stderr=err
        )
        process.wait()
        wall, peak = time.perf_counter() - start, 0
        if result.exists():  # else the launcher itself failed: its exit code and stderr say why
            wall_text, peak_text = result.read_text().split()
            wall, peak = float(wall_text), int(peak_text)
        err.seek(0)
        tail = err.read()[-4000:].decode("utf-8", errors="replace")
    return Child(wall, peak, process.returncode, tail)


def check_child(child: Child, what: str) -> None:
    if child.returncode != 0:
        raise SystemExit(f"{what} exited with {child.returncode}:\n{child.stderr}")


def cli_score_command(responses: Path, out: Path) -> list[str]:
    """What a user runs: ``python -m scoring score --responses F --out G``."""
    return [sys.executable, "-m", "scoring", "score", "--responses", str(responses), "--out", str(out)]


def time_cli(responses: Path, tmp: Path, runs: int) -> tuple[list[Child], Path]:
    """``runs`` whole-process runs of the CLI on ``responses``; its --out file of the last run."""
    out = tmp / "project_out.csv"
    children = []
    for _ in range(runs):
        child = run_child(cli_score_command(responses, out), tmp / "project_stdout.txt")
        check_child(child, "python -m scoring score")
        children.append(child)
    return children, out


def verdict_mismatches(project_out: Path, naive_out: Path) -> int:
    """Rows whose ``exact_correct`` or ``overlap_correct`` differ between the two output files
    (read as text; a missing column or a different row count counts every row)."""
    a = pl.read_csv(project_out, infer_schema=False)
    b = pl.read_csv(naive_out, infer_schema=False)
    if len(a) != len(b):
        print(f"MISMATCH: {len(a):,} rows in the project's output, {len(b):,} in the naive one", file=sys.stderr)
        return max(len(a), len(b))
    bad = pl.Series([False] * len(a))
    for col in VERDICTS:
        if col not in a.columns or col not in b.columns:
            print(f"MISMATCH: column {col} missing from an output", file=sys.stderr)
            return len(a)
        diff = (a[col] != b[col]).fill_null(True) | (a[col].is_null() != b[col].is_null())
        if diff.any():
            first = int(diff.arg_max())
            print(
                f"MISMATCH in {col}: {int(diff.sum())} rows, first row {first}: "
                f"project {a[col][first]!r}, naive {b[col][first]!r}",
                file=sys.stderr,
            )
        bad = bad | diff
    return int(bad.sum())


def whole_process(
    responses: Path, tmp: Path, rows: int, project_runs: int, naive_runs: int, object_baseline: bool
) -> bool:
    """Section 1: the CLI against the naive script, whole processes. Returns whether its goals are met."""
    naive_out = tmp / "naive_out.csv"
    naive_cmd = [sys.executable, str(NAIVE_SCRIPT), str(responses), str(naive_out)]
    # The project runs once before the naive script and the rest after, so a burst of other load
    # during the long naive run cannot hit all of them.
    project, project_out = time_cli(responses, tmp, 1)
    naive = []
    for _ in range(naive_runs):
        child = run_child(naive_cmd, tmp / "naive_stdout.txt")
        check_child(child, "tests/naive_score.py")
        naive.append(child)
    more, project_out = time_cli(responses, tmp, project_runs - 1)
    project += more
    objects = None
    if object_baseline:
        objects_out = tmp / "naive_object_out.csv"
        objects = run_child([*naive_cmd[:2], "--object", str(responses), str(objects_out)], tmp / "naive_stdout.txt")
        check_child(objects, "tests/naive_score.py --object")
    project_wall = statistics.median(c.wall for c in project)
    naive_wall = statistics.median(c.wall for c in naive)
    project_peak = max(c.peak for c in project)
    naive_peak = max(c.peak for c in naive)
    mismatched = verdict_mismatches(project_out, naive_out)
    if objects is not None:
        mismatched += verdict_mismatches(project_out, objects_out)
    speedup = naive_wall / project_wall

    print(f"\nWhole processes on {rows:,} rows ({responses.stat().st_size / 1e6:.0f} MB), {os.cpu_count()} cores")
    for label, children in (("python -m scoring score --out", project), ("naive_score.py (apply)", naive)):
        walls = ", ".join(f"{c.wall:.2f}" for c in children)
        print(
            f"  {label:<32} wall {statistics.median(c.wall for c in children):7.2f} s (median of "
            f"{len(children)}: {walls}), peak RSS {gib(max(c.peak for c in children))}"
        )
    if objects is not None:
        print(
            f"  {'naive_score.py --object':<32} wall {objects.wall:7.2f} s (once), peak RSS {gib(objects.peak)}: "
            f"speed-up against it {objects.wall / project_wall:.1f}x (not judged)"
        )
    print(
        f"  naive peak RSS {gib(naive_peak)}; verdict columns: "
        f"{'every row agrees' if mismatched == 0 else f'{mismatched:,} rows differ'}"
    )
    ok = goal("cli whole-process speed-up vs naive", speedup, ">=", GOAL_WHOLE_SPEEDUP, "x", MOONSHOT_WHOLE_SPEEDUP)
    ok &= goal("cli whole-process peak RSS", project_peak / 1024**3, "<", GOAL_WHOLE_PEAK_GIB, "GiB")
    ok &= goal("cli --out verdicts differing from naive (rows)", mismatched, "==", 0)
    return ok


# ---------------------------------------------------------------- in memory


def bench_polars(path: Path, scored, project_wall: float) -> bool:  # noqa: ANN001  (score_frame's frame)
    """``score_polars`` on the same rows, read as the polars path does (every column a string).

    Prints its wall time (median of 3) against ``score_frame``'s median and checks that every
    row of every output column agrees with ``score_frame``'s. Returns whether all rows agree.
    """
    from scoring.core.columnar import OUTPUT_COLUMNS, score_polars

    frame = pl.read_csv(path, infer_schema=False)
    score_polars(frame.head(1000))  # builds the regexes once (a few tenths of a second), untimed
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        result = score_polars(frame)
        runs.append(time.perf_counter() - start)
    wall = statistics.median(runs)
    mismatched = 0
    for col in OUTPUT_COLUMNS:
        diff = result[col].to_numpy() != scored[col].to_numpy()
        mismatched += int(diff.sum())
        if diff.any():
            print(f"POLARS MISMATCH in {col} at row {int(diff.argmax())}", file=sys.stderr)
    n = len(frame)
    print(
        f"polars score_polars (both metrics): wall {wall:7.2f} s {n / wall:>10,.0f} rows/s "
        f"(runs {', '.join(f'{w:.2f}' for w in runs)}) vs score_frame {project_wall:.2f} s: "
        f"{project_wall / wall:.2f}x; {'all rows agree' if mismatched == 0 else f'{mismatched} mismatches'}"
    )
    return goal("in-memory score_polars rows differing", mismatched, "==", 0)


def in_memory(data: bytes, path: Path) -> bool:
    """Section 2: ``score_frame`` (and ``score_polars``) on frames in memory. Returns whether its goals are met."""
    from scoring.core.loader import load_bytes
    from scoring.core.report import score_frame

    t1 = time.perf_counter()
    frame = load_bytes(data, "bench.csv").frame
    # The spec's scripts read with pandas' defaults (Arrow-backed strings in pandas 3); the naive
    # baseline scores that frame, as the scripts do. The project scores its own loader's frame.
    spec_frame = pd.read_csv(io.BytesIO(data), keep_default_na=False)
    gc.collect()
    t2 = time.perf_counter()
    print(f"\nIn memory: load {t2 - t1:.1f} s, peak RSS after load: {gib(peak_rss_bytes())}")

    def cpu_now() -> float:  # this process and its finished children
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def timed(func):  # -> (result, wall seconds, CPU seconds)
        wall, cpu = time.perf_counter(), cpu_now()
        result = func()
        return result, time.perf_counter() - wall, cpu_now() - cpu

    # The project side runs three times (once before the naive run, twice after) and its median
    # is used: a 2-second run is far more exposed to a burst of other load than a 60-second one.
    fast, *first = timed(lambda: score_frame(frame))
    peak_after_fast = peak_rss_bytes()
    slow, slow_wall, slow_cpu = timed(lambda: naive_score(spec_frame))
    same_wall = timed(lambda: naive_score(frame))[1] if isinstance(frame, pd.DataFrame) else None
    fast_runs = [first, *(timed(lambda: score_frame(frame))[1:] for _ in range(2))]
    fast_wall = statistics.median(w for w, _ in fast_runs)
    fast_cpu = statistics.median(c for _, c in fast_runs)

    cols = ["exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank"]
    mismatched = 0
    for col in cols:
        diff = fast[col].to_numpy() != slow[col].to_numpy()
        mismatched += int(diff.sum())
        if diff.any():
            row = int(diff.argmax())
            print(f"MISMATCH in {col} at row {row}: {spec_frame.iloc[row].to_dict()}", file=sys.stderr)

    n = len(spec_frame)
    speedup = slow_wall / fast_wall
    peak = peak_rss_bytes()
    for label, w, c in (("project score_frame", fast_wall, fast_cpu), ("naive apply(axis=1)", slow_wall, slow_cpu)):
        print(f"{label} (both metrics): CPU {c:7.2f} s {n / c:>10,.0f} rows/s | wall {w:7.2f} s {n / w:>10,.0f} rows/s")
    print("project runs (wall s): " + ", ".join(f"{w:.2f}" for w, _ in fast_runs) + " (median used)")
    if same_wall is not None:
        print(
            f"naive apply(axis=1) on the project's own (object-dtype) frame: wall {same_wall:7.2f} s "
            f"({same_wall / fast_wall:.1f}x the project)"
        )
    print(
        f"speed-up: {speedup:.1f}x wall time with {os.cpu_count()} cores, {slow_cpu / fast_cpu:.1f}x CPU time "
        f"(against the spec scripts' frame)"
    )
    print(f"peak memory (max RSS): {gib(peak_after_fast)} after project scoring, {gib(peak)} overall")
    tracemalloc.start()
    score_frame(frame)
    scoring_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"score_frame's own peak allocation (tracemalloc, untimed run): {scoring_peak / 1024**2:,.0f} MiB")
    print(f"exact pass rate {fast['exact_correct'].mean():.1%}, overlap pass rate {fast['overlap_correct'].mean():.1%}")
    ok = goal("in-memory score_frame speed-up (issue 2)", speedup, ">=", GOAL_SPEEDUP, "x")
    ok &= goal("in-memory peak RSS (issue 2)", peak / 1024**3, "<", GOAL_PEAK_GIB, "GiB")
    ok &= goal("in-memory score_frame rows differing", mismatched, "==", 0)
    ok &= bench_polars(path, fast, fast_wall)
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--project-runs", type=int, default=3, help="whole-process CLI runs (median used)")
    parser.add_argument("--naive-runs", type=int, default=1, help="whole-process naive runs (median used)")
    parser.add_argument("--whole-only", action="store_true", help="skip the in-memory section")
    parser.add_argument("--no-object-baseline", action="store_true", help="skip the naive run with dtype=object")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench_scoring_") as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.perf_counter()
        data = generate_csv(args.rows, args.seed)
        responses = tmp / "responses.csv"
        responses.write_bytes(data)
        print(
            f"rows: {args.rows:,} (half Devanagari), {len(data) / 1e6:.0f} MB, "
            f"generated in {time.perf_counter() - t0:.1f} s"
        )
        ok = whole_process(responses, tmp, args.rows, args.project_runs, args.naive_runs, not args.no_object_baseline)
        if not args.whole_only:
            ok &= in_memory(data, responses)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
