"""Which judge configuration (model, prompt version) a run's estimate uses, and which
configurations have labelled a run at all.

Judge verdicts are keyed by model and prompt version (:mod:`scoring.store.judge_cache`); a run
judged by two models has two label sets. Without a stored choice the estimate takes the latest
label of any configuration (as before the choice existed); the Judge page stores one after a user
compared the configurations against the human verdicts, and every page that shows the estimate
names it (:func:`describe`).

:func:`run_labels` is the one rule every reader of a run's judge labels goes through (the
estimate, the final verdicts of the Overview and Agreement, every export, ``export --judge``,
compare): the chosen configuration's labels, else the latest label of each row of any
configuration until one is chosen, with the name to show wherever judge figures appear.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Engine, func, insert, select

from scoring.core.verdict_rules import check_reviewer
from scoring.store import judge_cache
from scoring.store.engine import writer
from scoring.store.judge_cache import ERROR, JudgeVerdict
from scoring.store.orm_tables import JudgeChoice, utcnow

#: What the estimate uses when no configuration was chosen, as pages name it.
ANY_CONFIG = "latest label of any judge configuration"
_CHUNK = 500  # item keys per IN (...) query, as in judge_cache


@dataclass(frozen=True, order=True)
class JudgeConfig:
    """A judge configuration: labels from one model under one prompt version."""

    model: str
    prompt_version: str

    @property
    def name(self) -> str:
        """How pages name it: ``gpt-x (prompt v3)``."""
        return f"{self.model} (prompt {self.prompt_version})"


def describe(config: JudgeConfig | None) -> str:
    """The name of the labels the estimate uses: the chosen configuration's, else :data:`ANY_CONFIG`."""
    return config.name if config is not None else ANY_CONFIG


@dataclass(frozen=True)
class RunLabels:
    """A run's judge labels under the one rule (:func:`run_labels`) and whose they are."""

    #: Item key -> label (ERROR only where the configuration never replied); unjudged rows absent.
    labels: dict[str, str]
    #: The configuration chosen for the run; None while none is (the latest label of each row).
    choice: JudgeConfig | None
    #: The configurations the labels come from (sorted); the chosen one alone when there is a choice.
    configs: tuple[JudgeConfig, ...] = ()

    @property
    def name(self) -> str:
        """Whose labels these are, as pages, the CLI and the export manifest name them."""
        return labels_name(self.choice, self.configs)


def labels_name(choice: JudgeConfig | None, configs: Iterable[JudgeConfig] = ()) -> str:
    """``gpt-x (prompt v2), chosen for this run``; without a choice ``gpt-y (prompt v3), the latest
    label of each row; none chosen`` (every configuration that gave one of those labels)."""
    if choice is not None:
        return f"{choice.name}, chosen for this run"
    names = ", ".join(c.name for c in sorted(set(configs)))
    return f"{names or 'no configuration'}, the latest label of each row; none chosen"


def judge_line(labels: RunLabels | None) -> str:
    """The plain-text line a page shows beside judge figures: ``Judge: <name>.``"""
    return f"Judge: {labels.name}." if labels is not None else ""


def run_labels(engine: Engine, run_id: int, item_keys: Iterable[str]) -> RunLabels:
    """Run ``run_id``'s judge labels on ``item_keys`` (the run's keys) under the one rule: the
    configuration chosen for the run (its latest label per row, an ERROR row only where it never
    replied), else, until one is chosen, the latest label of each row of any configuration."""
    choice = get_choice(engine, run_id)
    model, version = (choice.model, choice.prompt_version) if choice is not None else (None, None)
    found = judge_cache.latest_by_item(engine, item_keys, model, version)
    labels = {key: verdict.label for key, verdict in found.items()}
    if choice is not None:
        return RunLabels(labels, choice, (choice,))
    configs = tuple(sorted({JudgeConfig(v.model, v.prompt_version) for v in found.values()}))
    return RunLabels(labels, None, configs)


def get_choice(engine: Engine, run_id: int) -> JudgeConfig | None:
    """The configuration chosen for ``run_id``; None when none is (the default applies)."""
    with engine.connect() as conn:
        row = conn.execute(
            select(JudgeChoice.model, JudgeChoice.prompt_version)
            .where(JudgeChoice.run_id == run_id)
            .order_by(JudgeChoice.id.desc())
            .limit(1)
        ).first()
    return JudgeConfig(row.model, row.prompt_version) if row is not None and row.model else None


def set_choice(engine: Engine, run_id: int, config: JudgeConfig | None, by: str) -> None:
    """Make ``config`` the run's judge for the estimate; None puts the default back.

    A name is required, as for every other write a user makes. Appended, never updated: the
    choices made before stay readable."""
    name = check_reviewer(by)
    model = version = ""
    if config is not None:
        model, version = config.model.strip(), config.prompt_version.strip()
        if not model or not version:
            raise ValueError("A judge configuration needs a model and a prompt version.")
    with writer(engine).begin() as conn:
        conn.execute(
            insert(JudgeChoice).values(
                run_id=run_id, model=model, prompt_version=version, chosen_by=name, chosen_at=utcnow()
            )
        )


def revision(engine: Engine) -> int:
    """Id of the newest choice: changes with every choice, so cached estimates can key on it."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.max(JudgeChoice.id))).scalar() or 0)


def configs_of(engine: Engine, item_keys: Iterable[str]) -> dict[JudgeConfig, int]:
    """Every configuration with a model reply (not only errors) on some of ``item_keys``, with
    the number of those items it replied on; sorted by model, then prompt version."""
    keys = sorted(set(item_keys))
    found: dict[JudgeConfig, set[str]] = {}
    with engine.connect() as conn:
        for start in range(0, len(keys), _CHUNK):
            stmt = (
                select(JudgeVerdict.model, JudgeVerdict.prompt_version, JudgeVerdict.item_key)
                .where(JudgeVerdict.item_key.in_(keys[start : start + _CHUNK]), JudgeVerdict.label != ERROR)
                .group_by(JudgeVerdict.model, JudgeVerdict.prompt_version, JudgeVerdict.item_key)
            )
            for model, version, key in conn.execute(stmt):
                found.setdefault(JudgeConfig(model, version), set()).add(key)
    return {config: len(found[config]) for config in sorted(found)}
