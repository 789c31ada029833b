"""The command line: ``python -m scoring <command>`` and the spec's scorer scripts.

Each command lives in its own module and registers itself in :mod:`scoring.cli.common`; importing
this package imports them all, so :func:`main` knows every subcommand.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from scoring.cli import export_cmd, score  # noqa: F401  (importing them registers their subcommands)
from scoring.cli.common import COMMANDS
from scoring.cli.score import run_metric

__all__ = ["main", "run_metric"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scoring <command>``."""
    parser = argparse.ArgumentParser(prog="python -m scoring", description="Answer-review scoring tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, configure, _) in COMMANDS.items():
        configure(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    return COMMANDS[args.command][2](args)

