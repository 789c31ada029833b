"""The per-run cache is bounded by bytes, not by a count of entries (issue 10's memory rule)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from scoring.core.memo import ByteBudgetCache, estimate_bytes


def test_least_recently_used_values_go_first_once_the_budget_is_passed() -> None:
    cache = ByteBudgetCache(budget=100, sizeof=len)
    calls: list[str] = []

    def make(key: str, size: int):
        return lambda: calls.append(key) or "x" * size

    assert cache.get("a", make("a", 40)) == "x" * 40
    cache.get("b", make("b", 40))
    cache.get("a", make("a", 40))  # a hit: "a" is now the most recent
    cache.get("c", make("c", 40))  # 120 > 100: the least recent ("b") goes
    assert calls == ["a", "b", "c"]
    assert "a" in cache and "c" in cache and "b" not in cache
    assert cache.used == 80 and len(cache) == 2
    cache.get("b", make("b", 40))
    assert calls[-1] == "b" and "a" not in cache  # "a" was older than "c"


def test_a_value_larger_than_the_budget_is_returned_but_not_kept() -> None:
    cache = ByteBudgetCache(budget=10, sizeof=len)
    assert cache.get("big", lambda: "y" * 11) == "y" * 11
    assert "big" not in cache and cache.used == 0
    with pytest.raises(ValueError, match="at least 0"):
        ByteBudgetCache(budget=-1)


def test_two_threads_asking_for_the_same_key_compute_it_once() -> None:
    cache = ByteBudgetCache(budget=10**6)
    computed: list[int] = []

    def slow() -> str:
        computed.append(1)
        time.sleep(0.2)
        return "value"

    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["value"] * 4 and computed == [1]


def test_sizes_follow_what_the_value_holds() -> None:
    small = pd.DataFrame({"a": ["x"] * 10})
    large = pd.DataFrame({"a": ["x" * 100] * 10_000})
    assert estimate_bytes(large) > 100 * estimate_bytes(small)
    assert estimate_bytes(np.zeros(1000, dtype=np.int64)) == 8000
    assert estimate_bytes({"k": large}) > estimate_bytes(large)
    cache = ByteBudgetCache(budget=2 * estimate_bytes(large) + 1000)
    for i in range(5):  # five large runs opened: at most two stay
        cache.get(("run", i), lambda: large.copy())
    assert len(cache) == 2 and cache.used <= cache.budget
