"""The judge's labels and statuses: the words its stored replies hold.

Apart from :mod:`scoring.judge` (which imports the OpenAI SDK, two seconds) so that whatever
reads stored labels (the Overview's judge figures, the agreement tables) need not load it.
"""

from __future__ import annotations

CORRECT = "CORRECT"
INCORRECT = "INCORRECT"
NOT_ATTEMPTED = "NOT_ATTEMPTED"
LABELS: tuple[str, ...] = (CORRECT, INCORRECT, NOT_ATTEMPTED)
#: A reply arrived but held no single valid label (the raw reply is kept).
UNPARSED = "UNPARSED"
#: The request failed after the SDK's retries (the error class is kept).
ERROR = "ERROR"
#: Not sent: the run was cancelled or aborted before this row's request started.
CANCELLED = "CANCELLED"
SCORED: tuple[str, ...] = LABELS
