"""Claims on both engines. Double-blind (issue 11): each item goes to two different reviewers,
never to two at once, an expired claim goes back to the pool, and many reviewers asking at the
same moment never get the same item. Outside it (issue 18): reviewers of one scope get different
rows whose union is a prefix of the seeded order, and a second opinion is asked for on purpose."""

from __future__ import annotations

import random
import threading
import time
from datetime import timedelta

from sqlalchemy import Engine, update

from scoring import ingest, review, store
from scoring.core.errors import NotSaved
from scoring.review import claim_rules as claims
from scoring.review.queue import QueueScope, claim_in_queue, hold, resume, team_progress
from scoring.store.orm_tables import Claim, utcnow

KEYS = [f"item-{i:03d}" for i in range(30)]


def test_two_reviewers_get_different_items_and_each_item_two_verdicts(engine: Engine) -> None:
    a = claims.claim_next(engine, 1, "alice", KEYS)
    b = claims.claim_next(engine, 1, "bob", KEYS)
    assert (a, b) == (KEYS[0], KEYS[1])  # alice holds item 0, so bob is handed the next one
    assert claims.claim_next(engine, 1, "alice", KEYS) == KEYS[0]  # asking again: the same item
    review.record_mark(engine, a, 1, "alice", "correct")
    assert claims.claim_next(engine, 1, "carol", KEYS) == KEYS[0]  # alice's claim is fulfilled
    review.record_mark(engine, KEYS[0], 1, "carol", "wrong")
    # Item 0 has two verdicts now: nobody else is handed it, and alice moves on.
    assert claims.claim_next(engine, 1, "dave", KEYS) == KEYS[2]
    assert claims.claim_next(engine, 1, "alice", KEYS) == KEYS[3]
    assert claims.live_claims(engine)[KEYS[1]] == "bob"


def test_an_expired_claim_goes_back_to_the_pool(engine: Engine) -> None:
    assert claims.claim_next(engine, 1, "alice", KEYS[:1]) == KEYS[0]
    assert claims.claim_next(engine, 1, "bob", KEYS[:1]) is None  # held by alice
    with engine.begin() as conn:
        conn.execute(update(Claim).values(expires_at=utcnow() - timedelta(minutes=1)))  # ten minutes later
    assert claims.claim_next(engine, 1, "bob", KEYS[:1]) == KEYS[0]
    assert claims.live_claims(engine) == {KEYS[0]: "bob"}


def test_a_scope_with_every_verdict_hands_out_nothing(engine: Engine) -> None:
    for who in ("alice", "bob"):
        for key in KEYS[:3]:
            review.record_mark(engine, key, 1, who, "correct")
    assert claims.claim_next(engine, 1, "carol", KEYS[:3]) is None
    assert claims.claim_next(engine, 1, "alice", KEYS[:3]) is None


def test_blind_scopes_are_per_run_and_bucket(engine: Engine) -> None:
    run = ingest.save_run(engine, b"answer,response\na,a\nb,c\n", "blind.csv").run
    assert not claims.is_blind(engine, run.id, "overlap_only")
    claims.set_blind(engine, run.id, "overlap_only", "ana")
    assert claims.is_blind(engine, run.id, "overlap_only") and not claims.is_blind(engine, run.id, "both_fail")
    claims.set_blind(engine, run.id, None, "ana")
    assert claims.is_blind(engine, run.id, "both_fail")
    claims.set_blind(engine, run.id, None, "ana", on=False)
    claims.set_blind(engine, run.id, "overlap_only", "ana", on=False)
    assert not claims.is_blind(engine, run.id, "overlap_only")


def test_reviewers_asking_at_once_never_share_an_item(engine: Engine) -> None:
    """Eight reviewers claim and mark in threads: no item is ever handed to one while another
    holds it, and no item ends with more than two verdicts or two from one reviewer."""
    start = threading.Barrier(8)
    lock = threading.Lock()
    in_hand: dict[str, str] = {}  # item -> reviewer, from the claim until just before the mark
    clashes: list[str] = []
    errors: list[BaseException] = []

    def again(action):  # noqa: ANN001, ANN202
        """As a person does when the page says "Not saved ... try again" (a busy SQLite on a
        loaded machine): press again. What is tested is who gets which item, not the wait."""
        for _ in range(30):
            try:
                return action()
            except NotSaved:
                time.sleep(0.05)
        return action()

    def work(name: str) -> None:
        try:
            start.wait(30)
            for _ in range(6):
                key = again(lambda: claims.claim_next(engine, 1, name, KEYS))
                if key is None:
                    return
                with lock:
                    if in_hand.get(key, name) != name:
                        clashes.append(f"{key} handed to {name} while {in_hand[key]} holds it")
                    in_hand[key] = name
                with lock:
                    del in_hand[key]
                again(lambda k=key: review.record_mark(engine, k, 1, name, "correct"))
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"r{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    assert clashes == []
    per_item = review.current_verdicts(engine, KEYS).groupby("item_key")["reviewer"].agg(list)
    assert per_item.map(len).sum() == 8 * 6  # every reviewer found six items (30 items x 2 slots)
    assert per_item.map(len).max() <= 2
    assert all(len(set(names)) == len(names) for names in per_item)


def test_a_domain_or_a_sample_can_be_blind_and_covers_only_its_own_items(engine: Engine) -> None:
    run = ingest.save_run(engine, b"answer,response\na,a\nb,c\n", "scopes.csv").run
    food = claims.BlindSpec("overlap_only", "Food")
    claims.set_blind(engine, run.id, food, "ana")
    assert claims.is_blind(engine, run.id, food)
    assert claims.is_blind(engine, run.id, claims.BlindSpec("overlap_only", "Food", 50))  # a sample of it
    assert not claims.is_blind(engine, run.id, claims.BlindSpec("overlap_only", "Music"))
    assert not claims.is_blind(engine, run.id, claims.BlindSpec("overlap_only"))  # the bucket is wider
    assert not claims.is_blind(engine, run.id, "overlap_only")
    sample = claims.BlindSpec(None, "Music", 20)
    claims.set_blind(engine, run.id, sample, "ana")
    assert claims.is_blind(engine, run.id, sample)
    assert not claims.is_blind(engine, run.id, claims.BlindSpec(None, "Music", 30))  # another sample: other rows
    assert not claims.is_blind(engine, run.id, claims.BlindSpec(None, "Music"))
    assert claims.blind_scopes(engine, run.id) == [sample, food]
    assert [s.label() for s in claims.blind_scopes(engine, run.id)] == ["Music · sample of 20", "overlap_only · Food"]
    claims.set_blind(engine, run.id, food, "ana", on=False)
    assert claims.blind_scopes(engine, run.id) == [sample]


def test_claims_are_read_a_window_at_a_time_past_a_finished_front(engine: Engine) -> None:
    keys = [f"w-{i:04d}" for i in range(claims.WINDOW * 2 + 5)]
    done = keys[: claims.WINDOW + 3]  # the whole first window and some of the second have two verdicts
    for who in ("alice", "bob"):
        review.record_marks(engine, [{"item_key": k, "run_id": 1, "reviewer": who, "verdict": "correct"} for k in done])
    assert claims.claim_next(engine, 1, "carol", keys) == keys[claims.WINDOW + 3]
    assert claims.claim_next(engine, 1, "dave", keys) == keys[claims.WINDOW + 4]
    # Carol's held item comes first even when it lies past the windows read so far.
    assert claims.claim_next(engine, 1, "carol", keys) == keys[claims.WINDOW + 3]


def test_the_audit_set_is_per_run_replaced_whole_and_blind_like_a_bucket(engine: Engine) -> None:
    run = ingest.save_run(engine, b"answer,response\na,a\nb,c\n", "audit.csv").run
    other = ingest.save_run(engine, b"answer,response\nx,y\n", "other.csv").run
    assert review.audit_keys(engine, run.id) == set()
    assert review.set_audit(engine, run.id, ["k1", "k2", "k1"], "ana") == 2
    review.set_audit(engine, other.id, ["k9"], "ana")
    assert review.audit_keys(engine, run.id) == {"k1", "k2"} and review.audit_keys(engine, other.id) == {"k9"}
    review.set_audit(engine, run.id, ["k3"], "ana")
    assert review.audit_keys(engine, run.id) == {"k3"}
    claims.set_blind(engine, run.id, review.AUDIT, "ana")
    assert claims.is_blind(engine, run.id, claims.BlindSpec(review.AUDIT, "Food"))
    assert not claims.is_blind(engine, run.id, "overlap_only")


# --- no review done twice by accident (issue 18): the default split and the second opinion ------


def team_scope(engine: Engine, n: int = 24) -> tuple[int, QueueScope]:
    """A stored run of ``n`` distinct rows and its whole-run queue scope in the seeded order."""
    lines = ["question,answer,Domain,response"] + [f"q{i}?,a{i},{('Art', 'Food')[i % 2]},r{i}" for i in range(n)]
    run = ingest.save_run(engine, ("\n".join(lines) + "\n").encode(), "team.csv").run
    scope = review.queue_scope(store.load_scored(engine, run.id), bucket=None, seed=run.review_seed)
    assert list(scope.row_idx) != sorted(scope.row_idx)  # the seeded order, not the file's
    return run.id, scope


def key_at(scope: QueueScope, row_idx: int) -> str:
    return str(scope.item_keys[list(scope.row_idx).index(row_idx)])


def test_three_reviewers_get_disjoint_rows_whose_union_is_a_prefix_of_the_order(engine: Engine) -> None:
    """Outside double-blind, three reviewers asking and marking in a random interleaving are
    each handed a row nobody else has or holds: every row ends with exactly one verdict, and at
    every moment the rows marked or held form a prefix of the seeded order."""
    run_id, scope = team_scope(engine)
    order = [str(k) for k in scope.item_keys]
    rng = random.Random(18)
    names = ["alice", "bob", "carol"]
    holding: dict[str, str | None] = {}
    for name in names:
        row = claim_in_queue(scope, engine, run_id, name)
        holding[name] = key_at(scope, row) if row is not None else None
    assert [holding[n] for n in names] == order[:3]  # claimed in turn along the order
    while any(holding.values()):
        name = rng.choice([n for n in names if holding[n]])
        review.record_mark(engine, holding[name], run_id, name, rng.choice(review.VERDICTS))
        row = claim_in_queue(scope, engine, run_id, name)
        holding[name] = key_at(scope, row) if row is not None else None
        touched = set(review.current_verdicts(engine, order)["item_key"]) | set(claims.live_claims(engine))
        assert touched == set(order[: len(touched)]), "the team's rows are not a prefix of the order"
    current = review.current_verdicts(engine, order)
    assert sorted(current["item_key"]) == sorted(order)
    assert current.groupby("item_key").size().max() == 1  # nobody reviewed a row another had reviewed
    assert current["reviewer"].nunique() == 3


def test_an_abandoned_or_skipped_row_returns_to_the_pool(engine: Engine) -> None:
    run_id, scope = team_scope(engine, 6)
    order = [int(r) for r in scope.row_idx]
    assert claim_in_queue(scope, engine, run_id, "alice") == order[0]
    assert claim_in_queue(scope, engine, run_id, "alice") == order[0]  # a refresh: the row she holds
    assert claim_in_queue(scope, engine, run_id, "bob") == order[1]
    with engine.begin() as conn:  # alice closed her tab; ten minutes later her row is free again
        conn.execute(update(Claim).where(Claim.reviewer == "alice").values(expires_at=utcnow() - timedelta(minutes=1)))
    assert claim_in_queue(scope, engine, run_id, "carol") == order[0]
    # bob skips his row: he moves on, and the row goes back to the pool at once, not in ten minutes.
    review.record_skip(engine, key_at(scope, order[1]), run_id, "bob")
    assert claim_in_queue(scope, engine, run_id, "bob") == order[2]
    assert claim_in_queue(scope, engine, run_id, "dave") == order[1]
    # Once nothing else is left for him, bob's skipped row comes back to him (if still free).
    for row, who in ((order[3], "erin"), (order[4], "erin"), (order[5], "erin")):
        review.record_mark(engine, key_at(scope, row), run_id, who, "correct")
    review.record_mark(engine, key_at(scope, order[2]), run_id, "bob", "correct")
    review.record_mark(engine, key_at(scope, order[0]), run_id, "carol", "correct")
    assert claim_in_queue(scope, engine, run_id, "bob") is None  # dave holds the skipped row
    review.record_skip(engine, key_at(scope, order[1]), run_id, "dave")
    assert claim_in_queue(scope, engine, run_id, "dave") == order[1]  # his own skip, nothing else left
    assert claim_in_queue(scope, engine, run_id, "bob") is None


def test_the_second_opinion_scope_hands_out_rows_marked_once_by_someone_else(engine: Engine) -> None:
    run_id, scope = team_scope(engine, 8)
    order = [int(r) for r in scope.row_idx]
    for row, who in ((order[0], "alice"), (order[1], "alice"), (order[2], "bob"), (order[4], "bob")):
        review.record_mark(engine, key_at(scope, row), run_id, who, "correct")
    review.record_mark(engine, key_at(scope, order[4]), run_id, "carol", "wrong")  # two verdicts already
    second = claims.SECOND_OPINION
    assert claim_in_queue(scope, engine, run_id, "alice", second) == order[2]  # not her own rows
    assert claim_in_queue(scope, engine, run_id, "carol", second) == order[0]
    assert claim_in_queue(scope, engine, run_id, "dave", second) == order[1]  # carol holds order[0]
    review.record_mark(engine, key_at(scope, order[2]), run_id, "alice", "wrong")
    # Row 3 has its two verdicts now; rows without any verdict are not second opinions.
    assert claim_in_queue(scope, engine, run_id, "alice", second) is None
    assert claim_in_queue(scope, engine, run_id, "erin", second) is None  # 0 and 1 are held, 2 and 4 have two
    # The default queue meanwhile hands out only rows nobody has marked.
    assert claim_in_queue(scope, engine, run_id, "erin") == order[3]
    per_item = review.current_verdicts(engine).groupby("item_key").size()
    assert per_item.max() == 2


def test_reviewers_asking_at_once_outside_double_blind_each_review_different_items(engine: Engine) -> None:
    """Six reviewers claim and mark in threads under the default rule: every item ends with
    exactly one verdict (the second-opinion rule is the double-blind code path with a floor)."""
    rule = claims.SPLIT
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            start.wait(30)
            while True:
                for _ in range(60):
                    try:
                        key = claims.claim_next(engine, 1, name, KEYS, rule=rule)
                        break
                    except NotSaved:
                        time.sleep(0.05)
                if key is None:
                    return
                for _ in range(60):
                    try:
                        review.record_mark(engine, key, 1, name, "wrong")
                        break
                    except NotSaved:
                        time.sleep(0.05)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    per_item = review.current_verdicts(engine, KEYS).groupby("item_key").size()
    assert sorted(per_item.index) == KEYS
    assert set(per_item) == {rule.needed}


def test_a_row_reopened_by_an_undo_is_held_so_nobody_else_is_handed_it(engine: Engine) -> None:
    run_id, scope = team_scope(engine, 6)
    order = [int(r) for r in scope.row_idx]
    first = key_at(scope, order[0])
    assert claim_in_queue(scope, engine, run_id, "alice") == order[0]
    review.record_mark(engine, first, run_id, "alice", "correct")
    assert claim_in_queue(scope, engine, run_id, "alice") == order[1]
    assert review.undo_last_mark(engine, "alice", run_id=run_id).item_key == first
    assert hold(engine, run_id, "alice", first)  # the page shows it again and holds it meanwhile
    assert claim_in_queue(scope, engine, run_id, "bob") == order[2]  # not alice's reopened row
    review.record_mark(engine, first, run_id, "alice", "wrong")
    assert claim_in_queue(scope, engine, run_id, "alice") == order[1]  # back to the row she held
    assert not hold(engine, run_id, "bob", first)  # marked once: not bob's in the default mode


def test_verdict_counts_are_reviewers_with_a_verdict_in_force_and_give_the_team_progress(engine: Engine) -> None:
    run_id, scope = team_scope(engine, 6)
    order = [str(k) for k in scope.item_keys]
    review.record_mark(engine, order[0], run_id, "alice", "correct")
    review.record_mark(engine, order[0], run_id, "alice", "wrong")  # a changed verdict is still one
    review.record_mark(engine, order[0], run_id, "bob", "wrong")
    review.record_mark(engine, order[1], run_id, "carol", "correct")
    review.record_mark(engine, order[2], run_id, "carol", "correct")
    review.undo_last_mark(engine, "carol")  # order[2] has no verdict in force any more
    review.record_skip(engine, order[3], run_id, "dave")  # a skip is no verdict
    counts = claims.reviewers_per_item(engine)
    assert counts == {order[0]: 2, order[1]: 1}
    combined = team_progress(scope, counts).iloc[-1]
    assert (int(combined["n"]), int(combined["reviewed"])) == (6, 2)
    assert review.scope_progress(scope, engine).iloc[-1]["reviewed"] == 2  # the same as from the events


def test_a_newly_chosen_scope_starts_at_its_front_and_lets_the_old_row_go(engine: Engine) -> None:
    """A row held in one scope comes first after a refresh, but a scope chosen anew starts at its
    own front (the row held elsewhere is let go), so its reviewed rows stay a prefix of it too."""
    run_id, _ = team_scope(engine, 12)
    run = store.get_run(engine, run_id)
    food = review.queue_scope(store.load_scored(engine, run_id), bucket=None, domain="Food", seed=run.review_seed)
    rows = [int(r) for r in food.row_idx]
    assert claims.claim_next(engine, run_id, "alice", [key_at(food, rows[1])], rule=claims.SPLIT) is not None
    assert claim_in_queue(food, engine, run_id, "alice") == rows[1]  # a refresh: the row she holds
    keep, let_go = resume(("all", None), ("Food", None), key_at(food, rows[1]))
    assert (keep, let_go) == ([], [key_at(food, rows[1])])
    claims.release(engine, "alice", let_go)
    assert claim_in_queue(food, engine, run_id, "alice", keep=keep) == rows[0]
    assert claim_in_queue(food, engine, run_id, "bob") == rows[1]  # let go: free for the next reviewer
    assert resume(("Food", None), ("Food", None), "k") == (["k"], [])  # the same scope keeps its row
    assert resume(None, ("Food", None), "k") == (None, [])  # a new session: every held row first
