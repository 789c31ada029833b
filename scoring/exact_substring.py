"""``python -m scoring.exact_substring --responses F [--out F] [--json] [--normalize]``."""

import sys

from scoring.cli import run_metric

if __name__ == "__main__":
    sys.exit(run_metric("exact_substring"))
