"""Judge settings: endpoint, model and sampling from overrides, the environment or
``.streamlit/secrets.toml``; the API key lives only in :class:`JudgeSettings` (its repr hides it).
Their names, defaults and meanings are listed with every other setting in
:data:`scoring.core.settings.SETTINGS` (``tests/test_settings_example.py`` checks they agree).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from scoring.core.errors import InputError
from scoring.core.settings import PROJECT_ROOT, lookup, read_secrets
from scoring.judge.prompt import PROMPT_VERSION

#: Where ``.streamlit/secrets.toml`` is looked for; tests point it elsewhere.
SECRETS_ROOT: Path = PROJECT_ROOT


class JudgeConfigError(InputError):
    """Missing or invalid judge settings; the message names the setting and where to set it."""


#: Setting -> environment variable / top-level secrets.toml key.
ENV_NAMES: dict[str, str] = {
    "base_url": "OPENAI_BASE_URL",
    "api_key": "OPENAI_API_KEY",
    "model": "JUDGE_MODEL",
    "temperature": "JUDGE_TEMPERATURE",
    "seed": "JUDGE_SEED",
    "max_tokens": "JUDGE_MAX_TOKENS",
    "timeout": "JUDGE_TIMEOUT",
    "concurrency": "JUDGE_CONCURRENCY",
    "max_retries": "JUDGE_MAX_RETRIES",
    "price_in_per_m": "JUDGE_PRICE_IN_PER_M",
    "price_out_per_m": "JUDGE_PRICE_OUT_PER_M",
    "structured": "JUDGE_STRUCTURED",
}


#: How a reader gives the endpoint and the model, as :meth:`JudgeSettings.check` words it (each
#: phrase ends where the environment variable's name follows): on the command line, its flags...
CLI_WORDS: Mapping[str, str] = {"base_url": "pass --base-url or set", "model": "pass --model or set"}
#: ... and on the dashboard's Judge page, its own fields.
PAGE_WORDS: Mapping[str, str] = {
    "base_url": 'type it in "Base URL" under "Endpoint and settings", or set',
    "model": 'type it in "Model" under "Endpoint and settings", or set',
}


@dataclass(frozen=True)
class JudgeSettings:
    """Endpoint and sampling settings. The key is held here only; ``repr`` never shows it."""

    base_url: str = ""
    api_key: str = ""
    model: str = ""
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = 512
    timeout: float = 60.0
    concurrency: int = 8
    max_retries: int = 2
    price_in_per_m: float | None = None
    price_out_per_m: float | None = None
    structured: bool = True  # ask for JSON-schema output; falls back to plain text if refused

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{f.name}={'***' if f.name == 'api_key' and self.api_key else repr(getattr(self, f.name))}"
            for f in fields(self)
        )
        return f"JudgeSettings({shown})"

    __str__ = __repr__

    @classmethod
    def from_env(
        cls,
        overrides: Mapping[str, object] | None = None,
        environ: Mapping[str, str] | None = None,
        root: Path | None = None,
    ) -> JudgeSettings:
        """Settings from ``overrides`` (None values ignored), then the environment, then
        ``.streamlit/secrets.toml`` (top-level ``OPENAI_BASE_URL``-style keys, or a ``[judge]``
        table with the field names), then the defaults."""
        env = os.environ if environ is None else environ
        secrets = read_secrets(root or SECRETS_ROOT)
        table = secrets.get("judge") if isinstance(secrets.get("judge"), dict) else {}
        given = dict(overrides or {})
        unknown = set(given) - set(ENV_NAMES)
        if unknown:
            raise TypeError(f"unknown judge settings: {sorted(unknown)}")
        values: dict[str, Any] = {}
        for name, env_name in ENV_NAMES.items():
            for source in (given.get(name), lookup(env_name, secrets, env), table.get(name)):
                if source is not None and source != "":
                    values[name] = _coerce_setting(name, source)
                    break
        return cls(**values)

    def check(self, given: Mapping[str, str] = CLI_WORDS) -> JudgeSettings:
        """Raise :class:`JudgeConfigError` with one clear line if the settings cannot work.
        ``given``: how the reader gives the endpoint and the model (:data:`CLI_WORDS`, the
        default, or :data:`PAGE_WORDS`), so each message names their own flag or field."""
        if not self.base_url.strip():
            raise JudgeConfigError(
                f"No judge endpoint: {given['base_url']} OPENAI_BASE_URL (environment or "
                ".streamlit/secrets.toml), e.g. http://localhost:8000/v1 or https://api.openai.com/v1."
            )
        if not self.base_url.startswith(("http://", "https://")):
            raise JudgeConfigError(
                f"The judge endpoint {display_url(self.base_url)!r} is not an http:// or https:// URL."
            )
        if not self.model.strip():
            raise JudgeConfigError(
                f"No judge model: {given['model']} JUDGE_MODEL (environment or .streamlit/secrets.toml)."
            )
        if self.concurrency < 1:
            raise JudgeConfigError(f"Judge concurrency must be at least 1 (got {self.concurrency}).")
        if self.max_retries < 0:
            raise JudgeConfigError(f"Judge max_retries must be 0 or more (got {self.max_retries}).")
        if not self.timeout > 0:
            raise JudgeConfigError(f"Judge timeout must be positive seconds (got {self.timeout}).")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise JudgeConfigError(f"Judge max_tokens must be at least 1 (got {self.max_tokens}).")
        return self

    def output_settings(self) -> dict[str, object]:
        """The settings that can change a reply: part of the cache key (never the key or URL)."""
        return {
            "temperature": float(self.temperature),
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "structured": bool(self.structured),
        }

    def public(self) -> dict[str, object]:
        """Everything but the key, for reports and the dashboard (the URL without credentials)."""
        out = {k: v for k, v in asdict(self).items() if k != "api_key"}
        out["base_url"] = display_url(self.base_url)
        out["api_key_set"] = bool(self.api_key)
        out["prompt_version"] = PROMPT_VERSION
        return out


def _coerce_setting(name: str, value: object) -> Any:
    kinds: dict[str, type] = {
        "temperature": float,
        "seed": int,
        "max_tokens": int,
        "timeout": float,
        "concurrency": int,
        "max_retries": int,
        "price_in_per_m": float,
        "price_out_per_m": float,
    }
    if name == "structured":
        if isinstance(value, bool):
            return value
        return str(value).strip().lower() not in ("0", "false", "no", "off")
    kind = kinds.get(name)
    if kind is None:
        return str(value).strip()
    try:
        return kind(value)
    except (TypeError, ValueError):
        # Only numeric settings reach here, so echoing the value cannot reveal the key.
        raise JudgeConfigError(f"Judge setting {name} ({ENV_NAMES[name]}) must be a number, got {value!r}.") from None


def display_url(url: str) -> str:
    """A URL without user-info or query string, safe to print or store."""
    url = re.sub(r"//[^/@]*@", "//", url)
    return url.split("?", 1)[0]


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` replaced (defence in depth for stored text)."""
    return text.replace(secret, "***") if secret and len(secret) >= 4 else text
