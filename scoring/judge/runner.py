"""The batch runner: rows judged concurrently (at most ``concurrency`` requests in flight),
identical rows sent once, cached rows read back, verdicts saved as they arrive.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine

from scoring.core.judge_labels import CANCELLED, ERROR, INCORRECT, UNPARSED
from scoring.judge.client import Outcome, RunState, ask, async_client
from scoring.judge.judge_settings import JudgeSettings
from scoring.judge.plan import ItemLike, JudgeItem, JudgeResult, JudgeRun, JudgeSummary, as_item, cost_of, plan_groups
from scoring.judge.prompt import PROMPT_VERSION, build_prompt
from scoring.store import judge_cache

# ---------------------------------------------------------------------------------------------
# The batch
# ---------------------------------------------------------------------------------------------
FLUSH_ROWS = 64
FLUSH_SECONDS = 1.0
PROGRESS_SECONDS = 0.05


async def judge_items_async(
    engine: Engine,
    settings: JudgeSettings,
    items: Iterable[ItemLike],
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> JudgeRun:
    """Judge rows concurrently; results come back in input order.

    Blank rows are INCORRECT without a request; cached rows are read back; identical rows share
    one request; at most ``settings.concurrency`` requests are in flight. ``progress(done,
    total)`` is called from this coroutine's thread (rows resolved so far). Setting ``cancel``
    stops the run: requests in flight are abandoned and unsent rows come back CANCELLED.
    Verdicts are written as they arrive, so a cancelled or crashed run keeps what it paid for.
    """
    settings.check()
    rows = [as_item(it) for it in items]
    started = time.monotonic()
    total = len(rows)
    results: list[JudgeResult | None] = [None] * total
    groups, blanks = plan_groups(settings, rows)
    for i in blanks:
        results[i] = JudgeResult(rows[i].key, INCORRECT, is_blank=True)
    hits = await asyncio.to_thread(judge_cache.lookup, engine, list(groups))
    for key, verdict in hits.items():
        for i in groups.pop(key):
            results[i] = JudgeResult(
                rows[i].key,
                verdict.label,
                raw=verdict.raw,
                cached=True,
                prompt_tokens=verdict.prompt_tokens,
                completion_tokens=verdict.completion_tokens,
                system_fingerprint=verdict.system_fingerprint,
                cache_key=key,
            )
    done = total - sum(len(idx) for idx in groups.values())
    if progress:
        progress(done, total)
    state = RunState(structured=settings.structured)
    run = JudgeRun([], JudgeSummary())
    if groups:
        await _send_all(engine, settings, rows, groups, results, state, run, progress, cancel, done, total)
    final = [r or JudgeResult(rows[i].key, CANCELLED) for i, r in enumerate(results)]
    run.results = final
    run.fatal_error = state.fatal
    run.summary = _summarise(settings, final, run.summary.requests, state, time.monotonic() - started)
    return run


async def _send_all(
    engine: Engine,
    settings: JudgeSettings,
    rows: list[JudgeItem],
    groups: dict[str, list[int]],
    results: list[JudgeResult | None],
    state: RunState,
    run: JudgeRun,
    progress: Callable[[int, int], None] | None,
    cancel: threading.Event | None,
    done: int,
    total: int,
) -> None:
    semaphore = asyncio.Semaphore(settings.concurrency)
    queue: asyncio.Queue[tuple[str, Outcome | None]] = asyncio.Queue()
    client = async_client(settings)

    async def worker(key: str) -> None:
        outcome: Outcome | None = None
        try:
            async with semaphore:
                if state.fatal is None and not (cancel is not None and cancel.is_set()):
                    item = rows[groups[key][0]]
                    prompt = build_prompt(item.question, item.answer, item.response)
                    outcome = await ask(client, settings, prompt, state)
        finally:
            queue.put_nowait((key, outcome))

    pending: list[dict[str, object]] = []
    last_flush = last_progress = time.monotonic()
    tasks = [asyncio.create_task(worker(key)) for key in groups]
    received = 0
    try:
        while received < len(tasks):
            if cancel is not None and cancel.is_set():
                run.cancelled = True
                break
            try:
                key, outcome = await asyncio.wait_for(queue.get(), timeout=0.1)
            except TimeoutError:
                continue
            received += 1
            if outcome is None:
                continue
            run.summary.requests += outcome.requests
            idx = groups[key]
            for n, i in enumerate(idx):
                results[i] = JudgeResult(
                    rows[i].key,
                    outcome.label,
                    raw=outcome.raw,
                    error_class=outcome.error_class,
                    shared=n > 0,
                    prompt_tokens=outcome.prompt_tokens if n == 0 else 0,
                    completion_tokens=outcome.completion_tokens if n == 0 else 0,
                    system_fingerprint=outcome.fingerprint,
                    retries=outcome.retries if n == 0 else 0,
                    cache_key=key,
                )
            pending.append(_row_for_store(settings, key, rows[idx[0]].key, outcome))
            done += len(idx)
            now = time.monotonic()
            if len(pending) >= FLUSH_ROWS or now - last_flush >= FLUSH_SECONDS:
                batch, pending = pending, []
                await asyncio.to_thread(judge_cache.save, engine, batch)
                last_flush = time.monotonic()
            if progress and (done == total or now - last_progress >= PROGRESS_SECONDS):
                progress(done, total)
                last_progress = now
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        while not queue.empty():  # replies that landed while we were stopping are still kept
            key, outcome = queue.get_nowait()
            if outcome is not None and results[groups[key][0]] is None:
                run.summary.requests += outcome.requests
                for n, i in enumerate(groups[key]):
                    results[i] = JudgeResult(
                        rows[i].key,
                        outcome.label,
                        raw=outcome.raw,
                        error_class=outcome.error_class,
                        shared=n > 0,
                        prompt_tokens=outcome.prompt_tokens if n == 0 else 0,
                        completion_tokens=outcome.completion_tokens if n == 0 else 0,
                        system_fingerprint=outcome.fingerprint,
                        cache_key=key,
                    )
                pending.append(_row_for_store(settings, key, rows[groups[key][0]].key, outcome))
        judge_cache.save(engine, pending)  # synchronous on purpose: we may be unwinding
        await client.close()
    if progress and done < total and not run.cancelled:
        progress(done, total)


def _row_for_store(settings: JudgeSettings, key: str, first_item_key: str, outcome: Outcome) -> dict[str, object]:
    return {
        "cache_key": key,
        "item_key": first_item_key,
        "model": settings.model,
        "prompt_version": PROMPT_VERSION,
        "settings": json.dumps(settings.output_settings(), sort_keys=True),
        "label": outcome.label,
        "raw": outcome.raw,
        "error_class": outcome.error_class,
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "system_fingerprint": outcome.fingerprint,
    }


def _summarise(
    settings: JudgeSettings, results: Sequence[JudgeResult], requests: int, state: RunState, elapsed: float
) -> JudgeSummary:
    sent = [r for r in results if not (r.cached or r.is_blank or r.label == CANCELLED)]
    prompt_tokens = sum(r.prompt_tokens or 0 for r in sent)
    completion_tokens = sum(r.completion_tokens or 0 for r in sent)
    errors = Counter(r.error_class for r in sent if r.label == ERROR)
    return JudgeSummary(
        rows=len(results),
        blank=sum(r.is_blank for r in results),
        cached=sum(r.cached for r in results),
        shared=sum(r.shared for r in results),
        requests=requests,
        retries=sum(r.retries for r in sent),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost=cost_of(settings, prompt_tokens, completion_tokens),
        errors=sum(errors.values()),
        unparsed=sum(1 for r in sent if r.label == UNPARSED),
        cancelled=sum(1 for r in results if r.label == CANCELLED),
        error_classes=dict(sorted(errors.items())),
        structured_fallback=state.fell_back,
        elapsed_s=elapsed,
    )


def _run_coroutine(factory: Callable[[], Any]) -> Any:
    """``asyncio.run`` here, or in a helper thread when this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def judge_run(
    engine: Engine,
    settings: JudgeSettings,
    items: Iterable[ItemLike],
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> JudgeRun:
    """Blocking :func:`judge_items_async` returning results and the run summary."""
    rows = list(items)
    return _run_coroutine(lambda: judge_items_async(engine, settings, rows, progress, cancel))


def judge_rows(
    engine: Engine,
    settings: JudgeSettings,
    items: Iterable[ItemLike],
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[JudgeResult]:
    """Blocking batch judge for the dashboard: one result per item, in order.

    Use :func:`judge_run` for the summary (tokens, cost, failures) as well.
    """
    return judge_run(engine, settings, items, progress, cancel).results
