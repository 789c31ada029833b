"""``python -m scoring.word_overlap --responses F [--out F] [--json] [--normalize]``."""

import sys

from scoring.cli import run_metric

if __name__ == "__main__":
    sys.exit(run_metric("word_overlap"))
