"""Judge runs in background threads, so the page stays responsive and can cancel them.

A job outlives the browser tab that started it (a refresh loses only the job id, not the work):
every verdict is saved to the database as it arrives.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field

from sqlalchemy import Engine

from scoring import judge

_JOBS: dict[str, JudgeJob] = {}
_LOCK = threading.Lock()


@dataclass
class JudgeJob:
    total: int
    cancel: threading.Event = field(default_factory=threading.Event)
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    result: judge.JudgeRun | None = None
    error: str | None = None
    finished: bool = False

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total


def start(engine: Engine, settings: judge.JudgeSettings, items: list[judge.JudgeItem]) -> str:
    """Start a judge run in a daemon thread; returns the job id."""
    job = JudgeJob(total=len(items))
    job_id = uuid.uuid4().hex

    def work() -> None:
        try:
            job.result = judge.judge_run(engine, settings, items, progress=job.progress, cancel=job.cancel)
        except Exception as exc:  # noqa: BLE001  (shown to the user; the key is never in it)
            job.error = judge.redact(f"{type(exc).__name__}: {exc}", settings.api_key)
        finally:
            job.finished = True

    with _LOCK:
        _JOBS[job_id] = job
    threading.Thread(target=work, name=f"judge-{job_id[:8]}", daemon=True).start()
    return job_id


def get(job_id: str | None) -> JudgeJob | None:
    with _LOCK:
        return _JOBS.get(job_id) if job_id else None
