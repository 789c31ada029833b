"""Everything the answer-review dashboard computes, in layers (see docs/development.md):
``core`` (pure), ``store`` (the database), ``judge`` and ``review`` on top of them,
``export`` and ``cli`` at the top.

Nothing in this package imports streamlit, so every verdict the dashboard shows can be
reproduced from the command line and tested without a UI.
"""

__version__ = "0.1.0"
