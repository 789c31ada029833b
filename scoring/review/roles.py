"""Who is reviewing, and what they may do: the three ways a reviewer is known, and the roles.

In this order, the first configured wins (the sidebar says which is in force):

1. ``signin``: Streamlit's ``st.login`` when ``[auth]`` is configured in secrets;
2. ``header``: a trusted header set by a reverse proxy (``REVIEW_TRUSTED_HEADER``, e.g.
   ``X-Forwarded-Email``). Off unless configured, and only safe behind a proxy that strips the
   header from clients' requests: anyone who can reach the dashboard directly can send it;
3. ``typed``: a name typed in the sidebar (one machine, people who trust each other).

Roles: ``REVIEW_ADJUDICATORS`` lists who may adjudicate, ``REVIEW_REVIEWERS`` (optional) who
may mark at all. Without them everyone may do everything, as on one machine. Each setting is
read from the environment, then from ``.streamlit/secrets.toml`` (:func:`scoring.core.settings.lookup`;
defaults and meanings in :data:`scoring.core.settings.SETTINGS`); lists are comma-separated in
the environment, a comma-separated string or a TOML list in secrets. Names compare ignoring
case and surrounding spaces (identity providers differ in the case of emails).

``REVIEW_ADJUDICATE_OWN`` says whether an adjudicator may decide a row they marked themselves
(default: yes, with a warning on the card; ``false``, ``no``, ``off`` or ``0`` forbids it, and so
does any other value than ``true``, ``yes``, ``on`` or ``1``: a setting someone wrote to restrict
adjudication should not open it by a typo).

``REVIEW_BLIND_AUDIT`` says whether the random sample (the audit scope, and a queue scope's
reproducible sample: the rows the true-accuracy estimate counts) is reviewed blind: the question,
golden answer and response only, without the metrics' verdicts, their highlighting or the judge's
label. Default: yes, since verdicts anchored by those labels bias the estimate and the judge's
measured agreement with people. Only a clear no (``false``, ``no``, ``off``, ``0``) turns it off,
so a misspelt value keeps the audit blind.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from scoring.core.settings import default_of, lookup
from scoring.core.verdict_rules import check_reviewer

HEADER_SETTING = "REVIEW_TRUSTED_HEADER"
ADJUDICATORS_SETTING = "REVIEW_ADJUDICATORS"
REVIEWERS_SETTING = "REVIEW_REVIEWERS"
ADJUDICATE_OWN_SETTING = "REVIEW_ADJUDICATE_OWN"
BLIND_AUDIT_SETTING = "REVIEW_BLIND_AUDIT"
MODE_LABELS = {
    "signin": "signed in (st.login)",
    "header": "from the proxy header {header}",
    "typed": "typed name (one machine)",
}


@dataclass(frozen=True)
class Identity:
    """How reviewers are known here, and the role lists (None: no restriction)."""

    mode: str
    header: str | None = None
    adjudicators: frozenset[str] | None = None
    reviewers: frozenset[str] | None = None
    adjudicate_own: bool = True
    blind_audit: bool = True  #: review the random sample blind (``REVIEW_BLIND_AUDIT``)

    @property
    def label(self) -> str:
        return MODE_LABELS[self.mode].format(header=self.header)

    def may_review(self, name: str) -> bool:
        return bool(name) and (self.reviewers is None or _key(name) in self.reviewers)

    def may_adjudicate(self, name: str) -> bool:
        return bool(name) and (self.adjudicators is None or _key(name) in self.adjudicators)


def _key(name: str) -> str:
    return name.strip().casefold()


def _flag(value: object, default: bool) -> bool:
    """A yes/no setting: unset keeps ``default``; only a clear yes (a TOML true, ``true``, ``yes``,
    ``on``, ``1``) turns it on, so a misspelt ``flase`` restricts rather than opens."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _unless_no(value: object) -> bool:
    """A yes/no setting that is on unless clearly turned off (a TOML false, ``false``, ``no``,
    ``off``, ``0``): a misspelt value keeps the safer setting."""
    if isinstance(value, bool):
        return value
    return not (isinstance(value, str | int) and str(value).strip().lower() in ("0", "false", "no", "off"))


def _names(value: object) -> frozenset[str] | None:
    if value in (None, ""):
        return None
    items = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[arg-type]
    return frozenset(_key(str(item)) for item in items if str(item).strip())


def identity(secrets: Mapping, environ: Mapping[str, str] = os.environ) -> Identity:
    """The identity configuration in force (see the module docstring for the order)."""
    adjudicators = _names(lookup(ADJUDICATORS_SETTING, secrets, environ))
    reviewers = _names(lookup(REVIEWERS_SETTING, secrets, environ))
    if reviewers is not None and adjudicators is not None:
        reviewers = reviewers | adjudicators  # an adjudicator may always mark
    own = _flag(lookup(ADJUDICATE_OWN_SETTING, secrets, environ), default=bool(default_of(ADJUDICATE_OWN_SETTING)))
    blind = _unless_no(lookup(BLIND_AUDIT_SETTING, secrets, environ))
    if "auth" in secrets:
        return Identity("signin", None, adjudicators, reviewers, own, blind)
    header = lookup(HEADER_SETTING, secrets, environ)
    if header:
        return Identity("header", str(header).strip(), adjudicators, reviewers, own, blind)
    return Identity("typed", None, adjudicators, reviewers, own, blind)


def from_header(headers: Mapping[str, str], config: Identity) -> tuple[str, str | None]:
    """(reviewer, problem) from the request headers in ``header`` mode; the problem says why the
    name is empty (the header is missing or unusable), without echoing a bad value at length."""
    assert config.header
    raw = next((v for k, v in headers.items() if k.lower() == config.header.lower()), "")
    if not str(raw).strip():
        return "", f"The proxy sent no {config.header} header: marks cannot be saved from this connection."
    try:
        return check_reviewer(str(raw)), None
    except ValueError as exc:
        return "", f"The {config.header} header is not a usable name: {exc}"


def refusal(config: Identity, name: str) -> str | None:
    """Why ``name`` may not mark here (not on the reviewers list), or None."""
    if name and not config.may_review(name):
        return f"{name} is not on the reviewers list ({REVIEWERS_SETTING}): marks are not saved under this name."
    return None


def cannot_mark(config: Identity, name: str, problem: str | None = None) -> str:
    """Why nobody marks from this session, in the words its identity mode calls for: never "type
    your name" where there is no name to type. ``name``: who the identity names (may be refused);
    ``problem``: the header's problem in ``header`` mode."""
    if name and not config.may_review(name):
        return (
            f"{name} is not on the reviewers list ({REVIEWERS_SETTING}), so no mark can be saved under this "
            "name. Ask whoever runs this dashboard to add you to the list."
        )
    if config.mode == "header":
        return problem or f"The proxy sent no {config.header} header: marks cannot be saved from this connection."
    if config.mode == "signin":
        return "Log in (in the sidebar) to mark rows: every mark is saved under your account."
    return "Type your name in the sidebar (Reviewer name) to mark rows: every mark is saved under it."
