"""Scoring core of the answer-review dashboard: loaders, protocols, statistics, storage.

Nothing in this package imports streamlit, so every verdict the dashboard shows can be
reproduced from the command line and tested without a UI.
"""

__version__ = "0.1.0"
