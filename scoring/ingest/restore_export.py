"""An uploaded export's human work restored into its new run: every reviewer's verdict, the rows
its queue served without one (skips) and the adjudicators' decisions (idempotent)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from scoring.store.adjudications import restore_adjudications
from scoring.store.restore import restore_skips, restore_verdicts


@dataclass(frozen=True)
class Restored:
    """How much of an export's work was restored."""

    verdicts: int = 0
    skips: int = 0
    decisions: int = 0


def restore_export(
    engine: Engine, run_id: int, keyed: pd.DataFrame, exported: pd.DataFrame, in_order: bool
) -> Restored:
    """Restore ``exported`` (rows aligned with ``keyed``, which holds ``item_key``) into run ``run_id``.
    ``in_order``: the run has the export's review seed (:func:`scoring.store.restore.restore_verdicts`)."""
    verdicts = restore_verdicts(engine, run_id, keyed, exported, in_order=in_order)
    skips = restore_skips(engine, run_id, keyed, exported, in_order=in_order)
    decisions = restore_adjudications(engine, run_id, keyed["item_key"].astype(str).tolist(), exported)
    return Restored(verdicts, skips, decisions)
