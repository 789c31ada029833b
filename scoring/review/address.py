"""The review queue's place as its page's address: the scope, the filters and the mode in the
query string (``?run=4&scope=audit&domain=Food&language=Tamil&sample=50&blind=on&view=my-verdicts``),
so a refresh, a round trip through another page and a link sent to a colleague open the same place.

:func:`read_address` turns the parameters into a :class:`QueueAddress`, checking each against what
the run offers: a value that does not fit (a hand-edited URL, a link to a domain another run has)
is named in a plain sentence and its default used instead, never an error. :meth:`QueueAddress.params`
is the other way. The run itself is ``?run=`` (every page's, :mod:`ui.run_choice`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scoring.store.audit import AUDIT

SCOPE, DOMAIN, LANGUAGE, SAMPLE = "scope", "domain", "language", "sample"
BLIND, SECOND, VIEW = "blind", "second", "view"
#: The queue's own parameters, in the order the address lists them.
PARAMS = (SCOPE, DOMAIN, LANGUAGE, SAMPLE, BLIND, SECOND, VIEW)
DEFAULT_SCOPE = "overlap_only"  #: the triage scope a first visit opens (the rows the metrics disagree on)
MAX_SAMPLE = 10_000
QUEUE, MY_VERDICTS = "queue", "my-verdicts"
VIEWS = (QUEUE, MY_VERDICTS)
ON, OFF = "on", "off"
_TRUE = {"on", "1", "true", "yes"}
_FALSE = {"off", "0", "false", "no"}
#: The longest value quoted back in a message (a hand-edited URL can hold anything).
_QUOTE = 60


@dataclass(frozen=True)
class QueueAddress:
    """Where the queue is: a scope (a bucket or :data:`AUDIT`), a domain and a row language (None:
    all), a sample size (0: every row), the reviewer's Blind and Second-opinion switches, and the
    view (:data:`QUEUE` or :data:`MY_VERDICTS`)."""

    scope: str = DEFAULT_SCOPE
    domain: str | None = None
    language: str | None = None
    sample: int = 0
    blind: bool = False
    second: bool = False
    view: str = QUEUE

    def params(self) -> dict[str, str]:
        """The address's query parameters: the scope always (a link names its scope), the rest only
        when not their default, so an address stays short."""
        out = {SCOPE: self.scope}
        if self.domain is not None:
            out[DOMAIN] = self.domain
        if self.language is not None:
            out[LANGUAGE] = self.language
        if self.sample:
            out[SAMPLE] = str(self.sample)
        if self.blind:
            out[BLIND] = ON
        if self.second:
            out[SECOND] = ON
        if self.view != QUEUE:
            out[VIEW] = self.view
        return out


@dataclass(frozen=True)
class Offered:
    """What the run offers the address: its scopes (the buckets, and :data:`AUDIT` while it has an
    audit sample), its domains and its row languages."""

    scopes: Sequence[str]
    domains: Sequence[str]
    languages: Sequence[str]


def _quoted(value: str) -> str:
    text = value if len(value) <= _QUOTE else value[: _QUOTE - 1] + "…"
    return f'"{text}"'


def _one(value: str | Sequence[str]) -> str:
    """A parameter given twice (``?scope=a&scope=b``) counts by its last value, as Streamlit reads it."""
    return value if isinstance(value, str) else (value[-1] if value else "")


def _switch(name: str, raw: str, problems: list[str]) -> bool:
    word = raw.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    problems.append(f"The address's {name}={_quoted(raw)} is not on or off: {name} is off.")
    return False


def read_address(params: Mapping[str, str | Sequence[str]], offered: Offered) -> tuple[QueueAddress, list[str]]:
    """The address the parameters give (the queue's own: :data:`PARAMS`; others are ignored), and
    one sentence per value that does not fit, naming the parameter and what is shown instead."""
    got = {k: _one(v) for k, v in params.items() if k in PARAMS}
    problems: list[str] = []
    scope = got.get(SCOPE, DEFAULT_SCOPE).strip() or DEFAULT_SCOPE
    if scope not in offered.scopes:
        why = (
            "this run has no audit sample (the True accuracy page plans one)"
            if scope == AUDIT
            else f"it is not a scope of this run ({', '.join(offered.scopes)})"
        )
        problems.append(f"The address's scope={_quoted(scope)} cannot be opened: {why}. Showing {DEFAULT_SCOPE}.")
        scope = DEFAULT_SCOPE
    domain: str | None = got.get(DOMAIN)
    if domain is not None and domain not in offered.domains:
        problems.append(f"The address's domain={_quoted(domain)} is not a domain of this run: showing all domains.")
        domain = None
    language: str | None = got.get(LANGUAGE)
    if language is not None and language not in offered.languages:
        known = ", ".join(offered.languages) or "none"
        problems.append(
            f"The address's language={_quoted(language)} is not a language of this run's rows ({known}): "
            "showing every language."
        )
        language = None
    sample = 0
    if SAMPLE in got:
        raw = got[SAMPLE].strip()
        if raw.isdigit() and int(raw) <= MAX_SAMPLE:
            sample = int(raw)
        else:
            problems.append(
                f"The address's sample={_quoted(got[SAMPLE])} is not a whole number from 0 to {MAX_SAMPLE:,}: "
                "showing every row of the scope (sample 0)."
            )
    blind = _switch(BLIND, got[BLIND], problems) if BLIND in got else False
    second = _switch(SECOND, got[SECOND], problems) if SECOND in got else False
    view = got.get(VIEW, QUEUE).strip().lower() or QUEUE
    if view not in VIEWS:
        problems.append(f"The address's view={_quoted(got[VIEW])} is not {QUEUE} or {MY_VERDICTS}: showing the queue.")
        view = QUEUE
    return QueueAddress(scope, domain, language, sample, blind, second, view), problems


def queue_params(params: Mapping[str, str | Sequence[str]]) -> dict[str, str]:
    """The queue's own parameters among ``params`` (one value each)."""
    return {k: _one(v) for k, v in params.items() if k in PARAMS}
