"""The LLM judge: any OpenAI-compatible endpoint, concurrent, cached, hard to fool.

Why it is built this way:

* Reproducibility: temperature 0 and a seed by default, a versioned prompt, and every verdict
  stored with model, prompt version and ``system_fingerprint`` (batching servers are not fully
  deterministic even at temperature 0, so the stored verdict is the record).
* Robustness: the question, golden answer and response sit inside delimiters, delimiter-like text
  in the data is neutralised, the response is capped, and the rules come after the data. Replies
  are parsed strictly (structured output when the server supports it, else exactly one label on
  the final line); anything else is UNPARSED with the raw reply kept, never a silent INCORRECT.
* Speed: an asyncio batch with at most ``concurrency`` requests in flight, identical rows sent
  once, and a cache so a re-run sends nothing. Transport retries are the SDK's own
  (``max_retries``): a second loop on top would multiply attempts.
* Secrecy: the API key lives only in :class:`JudgeSettings` (its repr hides it) and in the SDK
  client; it is not an input to any stored value, and error texts are reduced to class names.

Modules, each importing only those above it (and :mod:`scoring.core`, :mod:`scoring.store`):

* :mod:`~scoring.judge.prompt`: the prompt, neutralising the data, parsing replies (pure).
* :mod:`~scoring.judge.judge_settings`: :class:`JudgeSettings` from overrides, environment and secrets.
* :mod:`~scoring.judge.client`: request arguments, the SDK clients, one request.
* :mod:`~scoring.judge.plan`: items, results, summaries, cost, the preflight.
* :mod:`~scoring.judge.runner`: the concurrent, cached batch.
* :mod:`~scoring.judge.reports`: stored labels read back.

The labels (:mod:`scoring.core.judge_labels`) and what stored labels add up to, the judge's
accuracy per domain and its agreement with the metrics and the human verdicts
(:mod:`scoring.core.judge_accuracy`), live in core: pages that show them do not load the SDK.

No streamlit import: the dashboard's Judge page and ``python -m scoring.llm_judge`` share this.
The names below are the public API (``from scoring import judge; judge.judge_run(...)``).
"""

from scoring.core.judge_accuracy import (
    JUDGE_VERDICTS,
    JudgeAccuracyRow,
    format_judge_accuracy,
    judge_accuracy,
    judge_comparisons,
)
from scoring.core.judge_labels import CANCELLED, CORRECT, ERROR, INCORRECT, LABELS, NOT_ATTEMPTED, SCORED, UNPARSED
from scoring.judge.client import call_model, request_kwargs
from scoring.judge.judge_settings import (
    CLI_WORDS,
    ENV_NAMES,
    PAGE_WORDS,
    JudgeConfigError,
    JudgeSettings,
    display_url,
    redact,
)
from scoring.judge.plan import (
    EST_COMPLETION_TOKENS,
    ItemLike,
    JudgeItem,
    JudgeResult,
    JudgeRun,
    JudgeSummary,
    Preflight,
    as_item,
    cost_of,
    estimate_tokens,
    items_from_frame,
    preflight,
)
from scoring.judge.prompt import (
    BLOCKS,
    MAX_RESPONSE_CHARS,
    PROMPT_TEMPLATE,
    PROMPT_VERSION,
    RESPONSE_FORMAT,
    SYSTEM_MESSAGE,
    TRUNCATION_NOTE,
    build_prompt,
    neutralise,
    parse_label,
)
from scoring.judge.reports import attach_judge_labels, stored_labels
from scoring.judge.runner import judge_items_async, judge_rows, judge_run

# SECRETS_ROOT is deliberately not re-exported: patch ``scoring.judge.judge_settings.SECRETS_ROOT``, the
# module that reads it (a copy here would take a patch and change nothing).

__all__ = [
    "BLOCKS",
    "CANCELLED",
    "CLI_WORDS",
    "CORRECT",
    "ENV_NAMES",
    "ERROR",
    "EST_COMPLETION_TOKENS",
    "INCORRECT",
    "JUDGE_VERDICTS",
    "LABELS",
    "MAX_RESPONSE_CHARS",
    "NOT_ATTEMPTED",
    "PAGE_WORDS",
    "PROMPT_TEMPLATE",
    "PROMPT_VERSION",
    "RESPONSE_FORMAT",
    "SCORED",
    "SYSTEM_MESSAGE",
    "TRUNCATION_NOTE",
    "UNPARSED",
    "ItemLike",
    "JudgeAccuracyRow",
    "JudgeConfigError",
    "JudgeItem",
    "JudgeResult",
    "JudgeRun",
    "JudgeSettings",
    "JudgeSummary",
    "Preflight",
    "as_item",
    "attach_judge_labels",
    "build_prompt",
    "call_model",
    "cost_of",
    "display_url",
    "estimate_tokens",
    "format_judge_accuracy",
    "items_from_frame",
    "judge_accuracy",
    "judge_comparisons",
    "judge_items_async",
    "judge_rows",
    "judge_run",
    "neutralise",
    "parse_label",
    "preflight",
    "redact",
    "request_kwargs",
    "stored_labels",
]
