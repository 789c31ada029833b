"""``python -m scoring score|export|...``."""

import sys

from scoring.cli import main

sys.exit(main())
