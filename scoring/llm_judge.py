"""``python -m scoring.llm_judge --responses F --model M --base-url U ...`` (see :mod:`scoring.cli.judge_cmd`)."""

import sys

from scoring.cli.judge_cmd import main

if __name__ == "__main__":
    sys.exit(main())
