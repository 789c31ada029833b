"""Imports the modules that register ``python -m scoring`` subcommands beyond ``score``."""

import scoring.export  # noqa: F401
