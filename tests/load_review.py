"""Load: many reviewers marking at once, one of them killed and restarted; nothing lost or doubled.

Not collected by pytest (the name does not start with ``test_``). Run it as ``make test-load``
or ``.venv/bin/python tests/load_review.py [--reviewers 20] [--marks 200] [--engine both]``.

For each engine (SQLite, and PostgreSQL on a throwaway server from ``tests/pg_server.py``):
``--reviewers`` processes each give ``--marks`` actions through the storage API
(``review.record_mark`` / ``review.undo_last``) on items drawn from a shared pool, so reviewers
meet on the same items: mostly marks, about one in ten an undo of their latest mark, one in ten a
re-mark of an item already marked. Every action carries a unique token in its note, and a process
writes the token to its journal only after the call returned (the acknowledgement). One process is
killed with SIGKILL half-way and started again; it carries on from its journal.

Afterwards it checks, and exits 1 on any failure:
- every acknowledged mark is in the log exactly once (by token), and no mark is there that was
  never asked for;
- every acknowledged undo retracted exactly one mark of that reviewer, and no mark was undone
  twice;
- the current verdicts equal a replay of the acknowledged actions, reviewer by reviewer.

About four actions in ten are double-blind: the reviewer asks the queue for the next item
(``review.claim_next``, which claims it) and marks it. Those items must end with at most two
verdicts from different reviewers, and no item may be held by two reviewers at once (a hold runs
from the claim to the moment its mark is asked for).

It prints marks per second and the p50/p99 latency of a mark (for a double-blind one: asking for
the next item and marking it) for each engine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pg_server  # noqa: E402
from sqlalchemy import select  # noqa: E402

from scoring import review  # noqa: E402
from scoring.core.errors import NotSaved  # noqa: E402
from scoring.review import claim_rules as claims  # noqa: E402
from scoring.store import make_engine  # noqa: E402
from scoring.store.orm_tables import VerdictEvent  # noqa: E402

POOL = 2_000
#: Items reviewed double-blind: handed out by claims, two verdicts each (a pool of its own).
BLIND_KEYS = [f"blind-{i}" for i in range(3_000)]


def plan(reviewer: int, marks: int, seed: int) -> list[dict]:
    """The actions of one reviewer, fixed by the seed (a restarted process replays the same plan)."""
    rng = random.Random(seed * 1000 + reviewer)
    actions: list[dict] = []
    marked: list[str] = []
    for j in range(marks):
        roll = rng.random()
        token = f"r{reviewer}-a{j}"
        if roll < 0.1 and marked:
            actions.append({"kind": "undo", "token": token})
        elif roll < 0.2 and marked:
            actions.append(
                {
                    "kind": "mark",
                    "item": rng.choice(marked),
                    "verdict": rng.choice(["correct", "wrong"]),
                    "token": token,
                }
            )
        elif roll < 0.6:  # double-blind: the item is whatever the queue hands out (a claim)
            actions.append({"kind": "claim", "verdict": rng.choice(["correct", "wrong"]), "token": token})
        else:
            item = f"item-{rng.randrange(POOL)}"
            marked.append(item)
            actions.append({"kind": "mark", "item": item, "verdict": rng.choice(["correct", "wrong"]), "token": token})
    return actions


def worker(url: str, reviewer: int, marks: int, seed: int, journal: str, start) -> None:
    """One reviewer: the plan's actions from where the journal ends, each acknowledged there."""
    engine = make_engine(url)
    done = set()
    if os.path.exists(journal):
        with open(journal, encoding="utf-8") as fh:
            done = {json.loads(line)["token"] for line in fh if line.strip()}
    start.wait(120)
    name = f"reviewer{reviewer}"
    with open(journal, "a", encoding="utf-8") as out:
        for action in plan(reviewer, marks, seed):
            if action["token"] in done:
                continue
            if done and action["kind"] in ("mark", "claim"):  # a restart: did the last mark land before the kill?
                landed = _stored_mark(engine, name, action["token"])
                done = set()  # only the first pending action can have been in flight
                if landed is not None:
                    out.write(json.dumps({**action, "id": landed, "seconds": 0.0, "recovered": True}) + "\n")
                    continue
            began = time.perf_counter()
            for attempt in range(20):  # "Not saved" (busy past 2 s): press again, as a person would
                try:
                    result = _act(engine, name, action)
                    break
                except NotSaved:
                    if attempt == 19:
                        raise
            took = time.perf_counter() - began
            out.write(json.dumps({**action, **result, "seconds": took, "at": time.time()}) + "\n")
            out.flush()
            os.fsync(out.fileno())
    engine.dispose()


def _act(engine, name: str, action: dict) -> dict:
    """One planned action through the storage API; what to journal once it returned."""
    if action["kind"] == "claim":
        key = review.claim_next(engine, 1, name, BLIND_KEYS)
        claimed_at = time.time()  # held from here until the mark is asked for
        released_at = time.time()
        event_id = review.record_mark(engine, key, 1, name, action["verdict"], note=action["token"])
        return {"id": event_id, "item": key, "claimed_at": claimed_at, "released_at": released_at}
    if action["kind"] == "mark":
        event_id = review.record_mark(engine, action["item"], 1, name, action["verdict"], note=action["token"])
        return {"id": event_id}
    return {"undone": review.undo_last(engine, name, run_id=1)}


def _stored_mark(engine, reviewer: str, token: str) -> int | None:
    """The id of the mark carrying ``token``, if it was committed (what a client that lost the
    acknowledgement asks before retrying, so a retry never doubles a mark)."""
    with engine.connect() as conn:
        return conn.execute(
            select(VerdictEvent.id).where(VerdictEvent.reviewer == reviewer, VerdictEvent.note == token)
        ).scalar()


def run_engine(url: str, reviewers: int, marks: int, seed: int, folder: Path) -> tuple[dict, list[str]]:
    """All reviewers against one database, one killed and restarted; (figures, failures)."""
    make_engine(url).dispose()  # the schema first, so workers do not race to create it
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(reviewers)
    journals = [str(folder / f"journal{i}.jsonl") for i in range(reviewers)]
    procs = [ctx.Process(target=worker, args=(url, i, marks, seed, journals[i], start)) for i in range(reviewers)]
    began = time.perf_counter()
    for p in procs:
        p.start()
    victim = procs[0]
    while victim.is_alive():  # kill reviewer 0 once it is half-way through its plan
        if os.path.exists(journals[0]) and sum(1 for _ in open(journals[0], encoding="utf-8")) >= marks // 2:
            os.kill(victim.pid, signal.SIGKILL)
            break
        time.sleep(0.01)
    victim.join(60)
    killed = victim.exitcode == -signal.SIGKILL
    alone = ctx.Barrier(1)  # kept referenced until the child has it (else its semaphore is gone)
    restarted = ctx.Process(target=worker, args=(url, 0, marks, seed, journals[0], alone))
    restarted.start()
    for p in [*procs[1:], restarted]:
        p.join(600)
    wall = time.perf_counter() - began
    failures = [f"reviewer process exited with {p.exitcode}" for p in [*procs[1:], restarted] if p.exitcode]
    if not killed:
        failures.append("reviewer 0 finished before it could be killed (raise --marks)")
    acked = [json.loads(line) for j in journals for line in open(j, encoding="utf-8") if line.strip()]
    failures += verify(url, acked, reviewers)
    latencies = sorted(a["seconds"] for a in acked if a["kind"] in ("mark", "claim") and not a.get("recovered"))
    stamps = [a["at"] for a in acked if "at" in a]
    busy = max(stamps) - min(stamps)  # first to last acknowledgement: process start-up left out
    figures = {
        "actions": len(acked),
        "marks": len(latencies),
        "blind_items": len({a["item"] for a in acked if a["kind"] == "claim"}),
        "marks_per_s": len(latencies) / busy if busy else float("nan"),
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * statistics.quantiles(latencies, n=100, method="inclusive")[98],
        "wall_s": wall,
        "killed": killed,
    }
    return figures, failures


def verify(url: str, acked: list[dict], reviewers: int) -> list[str]:
    """Every acknowledged action is in the log once, and the current verdicts replay them."""
    engine = make_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                VerdictEvent.id,
                VerdictEvent.reviewer,
                VerdictEvent.item_key,
                VerdictEvent.action,
                VerdictEvent.verdict,
                VerdictEvent.note,
                VerdictEvent.undoes,
            ).order_by(VerdictEvent.id)
        ).all()
    failures: list[str] = []
    marks_by_token: dict[str, list] = {}
    for row in rows:
        if row.action == "mark":
            marks_by_token.setdefault(row.note, []).append(row)
    asked = {a["token"] for a in acked if a["kind"] in ("mark", "claim")}
    for action in acked:
        if action["kind"] not in ("mark", "claim"):
            continue
        found = marks_by_token.get(action["token"], [])
        if len(found) != 1 or found[0].id != action["id"]:
            failures.append(f"acknowledged mark {action['token']} found {len(found)} times")
    unasked = set(marks_by_token) - asked
    # A mark in flight when its process was killed may be stored without an acknowledgement (the
    # kill came between the commit and the journal); it must then be one of the victim's, once.
    strays = [t for t in unasked if not t.startswith("r0-") or len(marks_by_token[t]) != 1]
    failures += [f"mark {t} stored but never asked for" for t in strays]
    undone = [row.undoes for row in rows if row.action == "undo"]
    if len(undone) != len(set(undone)):
        failures.append("a mark was undone twice")
    acked_undos = sum(1 for a in acked if a["kind"] == "undo" and a.get("undone"))
    if len(undone) < acked_undos:
        failures.append(f"{acked_undos} undos acknowledged, {len(undone)} stored")
    current = review.current_verdicts(engine)
    if current.duplicated(["item_key", "reviewer"]).any():
        failures.append("a reviewer has two current verdicts on one item")
    # Double-blind: at most two verdicts in force per item, from different reviewers (an undone
    # verdict frees its slot for another reviewer)...
    blind = current[current["item_key"].astype(str).str.startswith("blind-")]
    per_item = blind.groupby("item_key")["reviewer"].agg(list)
    crowded = per_item[per_item.map(len) > claims.VERDICTS_NEEDED]
    for key, who in crowded.head(3).items():
        history = [(r.id, r.reviewer, r.action, r.note, r.undoes) for r in rows if r.item_key == key]
        failures.append(f"blind item {key} has verdicts from {who}; its log: {history}")
    # ... and never held by two reviewers at once: a hold runs from the claim to the moment the
    # mark is asked for; two holds of one item by different reviewers must not overlap.
    holds: dict[str, list[tuple[float, float, str]]] = {}
    for action in acked:
        if action["kind"] == "claim" and "claimed_at" in action:
            who = action["token"].split("-")[0]
            holds.setdefault(action["item"], []).append((action["claimed_at"], action["released_at"], who))
    for key, spans in holds.items():
        spans.sort()
        for (_s1, e1, w1), (s2, _e2, w2) in zip(spans, spans[1:]):
            if w1 != w2 and s2 < e1:
                failures.append(f"blind item {key} held by {w1} and {w2} at once")
    engine.dispose()
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--marks", type=int, default=200, help="actions per reviewer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=("both", "sqlite", "postgresql"), default="both")
    args = parser.parse_args(argv)
    engines = ("sqlite", "postgresql") if args.engine == "both" else (args.engine,)
    ok = True
    print(
        f"{args.reviewers} reviewer processes x {args.marks} actions (marks, ~10% undos, ~10% re-marks), "
        f"items drawn from a pool of {POOL}; reviewer 0 killed (SIGKILL) half-way and restarted"
    )
    for engine_name in engines:
        with tempfile.TemporaryDirectory() as tmp:
            server = None
            if engine_name == "sqlite":
                url = f"sqlite:///{tmp}/load.db"
            else:
                server = pg_server.start()
                _, url = server.database()
            try:
                figures, failures = run_engine(url, args.reviewers, args.marks, args.seed, Path(tmp))
            finally:
                if server is not None:
                    server.stop()
        f = figures
        print(
            f"{engine_name:<10} {f['marks']} marks ({f['actions']} actions) in {f['wall_s']:.1f} s: "
            f"{f['marks_per_s']:.0f} marks/s, mark latency p50 {f['p50_ms']:.1f} ms, "
            f"p99 {f['p99_ms']:.1f} ms; killed and restarted: {f['killed']}"
        )
        for failure in failures[:20]:
            print(f"  FAIL {failure}")
        verdict = (
            "ok: every acknowledged mark once, undos once, one current verdict each; "
            f"{f['blind_items']} double-blind items, none held by two at once, none past two verdicts"
        )
        print(f"  {verdict if not failures else 'FAILED'}")
        ok &= not failures
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
