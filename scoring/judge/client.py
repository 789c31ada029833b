"""Talking to the endpoint: request arguments, the OpenAI SDK clients, one blocking call
(:func:`call_model`, the spec script's hook) and one row's asynchronous request (:func:`ask`).

Transport retries are the SDK's own (``max_retries``): a second loop on top would multiply
attempts. Error texts are reduced to class names and replies are redacted of the key.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import openai

from scoring.core.judge_labels import ERROR
from scoring.judge.judge_settings import JudgeSettings, redact
from scoring.judge.prompt import RESPONSE_FORMAT, SYSTEM_MESSAGE, parse_label

#: Sent as the bearer token when no key is configured (local servers ignore it; the SDK needs one).
NO_KEY = "no-key"
#: Error classes that will fail every row alike: the run stops sending instead of repeating them.
FATAL_ERRORS = ("AuthenticationError", "PermissionDeniedError", "NotFoundError")


def request_kwargs(settings: JudgeSettings, prompt: str, structured: bool) -> dict[str, Any]:
    """Arguments for ``chat.completions.create`` (one system message, the prompt as user)."""
    kwargs: dict[str, Any] = {
        "model": settings.model,
        "messages": [
            {"role": "system", "content": SYSTEM_MESSAGE},
            {"role": "user", "content": prompt},
        ],
        "temperature": settings.temperature,
    }
    if settings.seed is not None:
        kwargs["seed"] = settings.seed
    if settings.max_tokens is not None:
        kwargs["max_tokens"] = settings.max_tokens
    if structured:
        kwargs["response_format"] = RESPONSE_FORMAT
    return kwargs


def _client_args(settings: JudgeSettings) -> dict[str, Any]:
    return {
        "base_url": settings.base_url,
        "api_key": settings.api_key or NO_KEY,
        "max_retries": settings.max_retries,
        "timeout": settings.timeout,
    }


_SYNC_CLIENTS: dict[tuple[Any, ...], openai.OpenAI] = {}
_PLAIN_ONLY: set[str] = set()  # base URLs that refused response_format (sync path)
_SYNC_LOCK = threading.Lock()


def _sync_client(settings: JudgeSettings) -> openai.OpenAI:
    key = (settings.base_url, settings.api_key, settings.timeout, settings.max_retries)
    with _SYNC_LOCK:
        client = _SYNC_CLIENTS.get(key)
        if client is None:
            client = openai.OpenAI(**_client_args(settings))
            _SYNC_CLIENTS[key] = client
    return client


def call_model(prompt: str, settings: JudgeSettings | None = None) -> str:
    """One blocking request, the spec script's hook: the reply text ('' when it has none).

    Settings default to :meth:`JudgeSettings.from_env`. Errors propagate as the SDK's exceptions
    (after its own retries). The batch API below is what the CLI and the dashboard use.
    """
    settings = (settings or JudgeSettings.from_env()).check()
    client = _sync_client(settings)
    structured = settings.structured and settings.base_url not in _PLAIN_ONLY
    try:
        completion = client.chat.completions.create(**request_kwargs(settings, prompt, structured))
    except (openai.BadRequestError, openai.UnprocessableEntityError):
        if not structured:
            raise
        completion = client.chat.completions.create(**request_kwargs(settings, prompt, False))
        _PLAIN_ONLY.add(settings.base_url)
    return _content(completion)


def _content(completion: Any) -> str:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return ""
    return getattr(choices[0].message, "content", None) or ""


def async_client(settings: JudgeSettings) -> openai.AsyncOpenAI:
    """A fresh asynchronous client for one batch (the caller closes it)."""
    return openai.AsyncOpenAI(**_client_args(settings))


# ---------------------------------------------------------------------------------------------
# One row's request in a batch
# ---------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    """What one request (and its possible plain-text resend) came back with."""

    label: str
    raw: str = ""
    error_class: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    fingerprint: str | None = None
    retries: int = 0
    requests: int = 1


@dataclass
class RunState:
    """Shared by a batch's requests: structured output still on, successes, the fatal error."""

    structured: bool
    successes: int = 0
    fatal: str | None = None
    fell_back: bool = False


async def _create(client: openai.AsyncOpenAI, kwargs: dict[str, Any]) -> tuple[Any, int]:
    raw = await client.chat.completions.with_raw_response.create(**kwargs)
    return raw.parse(), int(getattr(raw, "retries_taken", 0) or 0)


async def ask(client: openai.AsyncOpenAI, settings: JudgeSettings, prompt: str, state: RunState) -> Outcome:
    """One row's request (plus a plain-text resend if the server refuses response_format)."""
    requests = 1
    structured = state.structured
    try:
        try:
            completion, retries = await _create(client, request_kwargs(settings, prompt, structured))
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            if not structured:
                raise
            requests += 1
            completion, retries = await _create(client, request_kwargs(settings, prompt, False))
            state.structured = False
            state.fell_back = True
    except Exception as exc:  # every failure becomes ERROR with its class; CancelledError passes
        name = type(exc).__name__
        if name in FATAL_ERRORS or (
            isinstance(exc, openai.APIConnectionError)
            and not isinstance(exc, openai.APITimeoutError)
            and state.successes == 0
        ):
            state.fatal = state.fatal or name
        return Outcome(ERROR, error_class=name, requests=requests)
    state.successes += 1
    content = redact(_content(completion), settings.api_key)
    usage = getattr(completion, "usage", None)
    return Outcome(
        parse_label(content),
        raw=content,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        fingerprint=getattr(completion, "system_fingerprint", None),
        retries=retries,
        requests=requests,
    )
