"""``python -m scoring runs list | archive ID | restore ID | remove-samples | add-samples``: the
stored runs, tidied.

``list`` prints one line per run (id, rows, uploaded, name; archived runs only with ``--all`` or
``--archived``, marked so). ``archive`` takes a run out of the run list and every page's choices;
its verdicts stay (they belong to items). ``restore`` puts it back. Deleting a run of one's own for
good is only on the Upload page, behind its own confirmation. ``remove-samples`` deletes every
bundled sample run for good (Start here's button); they are not loaded again unless asked:
``add-samples`` loads them (into any database, a team's too). An unknown id exits 2 with one line.
"""

from __future__ import annotations

import argparse

from scoring import ingest
from scoring.cli.common import guarded, register
from scoring.store import (
    SAMPLE_MARK,
    all_runs,
    archive_run,
    is_sample,
    open_database,
    remove_samples,
    removed_sentence,
    restore_run,
)


def _configure(parser: argparse.ArgumentParser) -> None:
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser(
        "list", parents=[db], help="the runs, newest first (archived ones with --all or --archived)"
    )
    which = listing.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="listed and archived runs")
    which.add_argument("--archived", action="store_true", help="archived runs only")
    for name, text in (
        ("archive", "take a run out of the run list (its verdicts stay)"),
        ("restore", "put an archived run back in the run list"),
    ):
        actions.add_parser(name, parents=[db], help=text, description=text).add_argument(
            "id", type=int, help="the run's id"
        )
    text = "delete every bundled sample run for good; they are not loaded again"
    actions.add_parser("remove-samples", parents=[db], help=text, description=text)
    text = "load the bundled sample runs (marked as samples; runs already there are kept)"
    actions.add_parser("add-samples", parents=[db], help=text, description=text)


def _shown(text: str) -> str:
    """A run's name as one printable line: it is the uploader's text (a line break or a terminal
    escape in it must not change what the terminal shows)."""
    return "".join(c if c.isprintable() else "?" for c in " ".join(str(text).split()))


def _line(info, archived) -> str:
    name = _shown(info.name) + (f" ({SAMPLE_MARK})" if is_sample(info) else "")
    when = f"  archived {archived:%Y-%m-%d %H:%M}" if archived is not None else ""
    return f"{info.id:>6}  {info.n_rows:>9,} rows  {info.uploaded_at:%Y-%m-%d %H:%M}  {name}{when}"


@register("runs", "list the stored runs; archive or restore one; remove or add the sample runs", _configure)
def cmd_runs(args: argparse.Namespace) -> int:
    def body() -> None:
        engine = open_database(args.db)
        if args.action == "list":
            runs = all_runs(engine, archived=None if args.all else True if args.archived else False)
            print(f"{'id':>6}  {'rows':>14}  {'uploaded':<16}  name")
            for info, archived in runs:
                print(_line(info, archived))
        elif args.action == "archive":
            info = archive_run(engine, args.id)
            print(
                f"archived run {info.id} ({_shown(info.name)}); its verdicts stay. "
                f"Restore: python -m scoring runs restore {info.id}"
            )
        elif args.action == "restore":
            info = restore_run(engine, args.id)
            print(f"restored run {info.id} ({_shown(info.name)}) to the run list")
        elif args.action == "remove-samples":
            print(removed_sentence(remove_samples(engine)))
        else:
            added = ingest.load_samples(engine)
            print(f"loaded {len(added)} sample runs ({', '.join(f'#{r.id}' for r in added)})")

    return guarded(body)
