"""What a reviewer last typed with a row: the reason and note of their latest mark or skip.

The review card starts its fields from it, so nothing typed is lost between showings of a row: a
note given with a skip comes back with the row, a mark's note comes back when an undo reopens the
row, and re-marking a row does not blank the note given with it before.
"""

from __future__ import annotations

from sqlalchemy import Engine, bindparam, select

from scoring.store.orm_tables import VerdictEvent

#: The reason and note of the reviewer's latest mark or skip of an item, undone or not: built once
#: with bound parameters, as the card reads it on every showing.
_LAST_DETAILS = (
    select(VerdictEvent.reason, VerdictEvent.note)
    .where(
        VerdictEvent.item_key == bindparam("key"),
        VerdictEvent.reviewer == bindparam("who"),
        VerdictEvent.action.in_(("mark", "skip")),
    )
    .order_by(VerdictEvent.id.desc())
    .limit(1)
)


def last_details(engine: Engine, reviewer: str, item_key: str) -> tuple[str, str]:
    """(reason, note) the reviewer last gave the item with a mark or a skip, undone or not, else
    ("", ""). One indexed query (``item_key``)."""
    with engine.connect() as conn:
        found = conn.execute(_LAST_DETAILS, {"key": item_key, "who": reviewer.strip()}).first()
    return (str(found[0] or ""), str(found[1] or "")) if found is not None else ("", "")
