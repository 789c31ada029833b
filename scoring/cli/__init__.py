"""The command line: ``python -m scoring <command>`` and the spec's scorer scripts.

Each command lives in its own module and registers itself in :mod:`scoring.cli.common` when
imported. :func:`main` imports only the module of the command asked for (all of them for
``--help``): ``export`` pulls in the database and the judge client, a second of imports that
``score`` on a million rows should not wait for.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from scoring.cli.common import COMMANDS
from scoring.cli.score import run_metric

__all__ = ["COMMAND_MODULES", "main", "run_metric"]

#: Each subcommand and the module that registers it.
COMMAND_MODULES = {
    "score": "scoring.cli.score",
    "export": "scoring.cli.export_cmd",
    "compare": "scoring.cli.compare_cmd",
    "estimate": "scoring.cli.estimate_cmd",
    "judge-trust": "scoring.cli.trust_cmd",
    "runs": "scoring.cli.runs_cmd",
    "matchers": "scoring.cli.matchers_cmd",
    "table": "scoring.cli.table_cmd",
    "report": "scoring.cli.report_cmd",
}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scoring <command>``."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    asked = COMMAND_MODULES.get(args_in[0]) if args_in else None
    for module in [asked] if asked else COMMAND_MODULES.values():
        importlib.import_module(module)
    parser = argparse.ArgumentParser(prog="python -m scoring", description="Answer-review scoring tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, configure, _) in COMMANDS.items():
        configure(sub.add_parser(name, help=help_text, description=help_text))
    args, rest = parser.parse_known_args(args_in)
    if rest and args.command == "compare" and not any(r.startswith("-") for r in rest):
        args.files = [*args.files, *rest]  # files after a --run: argparse stops taking them at the option
    elif rest:
        parser.parse_args(args_in)  # the usual message and exit 2 for what is not understood
    return COMMANDS[args.command][2](args)
