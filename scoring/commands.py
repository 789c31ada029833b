"""Imports the modules that register ``python -m scoring`` subcommands beyond ``score``."""
