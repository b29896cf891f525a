"""Credentials: which keys are credentials, and scrubbing their values from text.

API keys reach tauguard only through the environment. Config files and ``--llm-args`` may
not carry credential keys, and every string written to run files, logs, progress lines or
reports is scrubbed of the values of credential environment variables, because providers
sometimes echo the request's Authorization header in their error text.

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "<redacted>"

# Argument keys that carry a credential. `max_tokens` and friends are not credentials:
# only a key that *is* a token (`token`, `auth_token`, `access-token`) counts.
_CREDENTIAL_KEY = re.compile(
    r"(api[_-]?key|secret|passw(or)?d|authorization|credential|(^|[_-])token$|^bearer$)", re.IGNORECASE
)
# Environment variables whose values are scrubbed from everything tauguard writes.
_CREDENTIAL_ENV = re.compile(r"(_API_KEY$|^API_KEY$|_TOKEN$|SECRET|PASSWORD)", re.IGNORECASE)
# Shorter values are not scrubbed: they would mangle ordinary text and are no real keys.
_MIN_SECRET_LEN = 6


def is_credential_key(key: str) -> bool:
    """Whether an argument key names a credential (``api_key``, ``auth_token``, ``client_secret``...)."""
    return bool(_CREDENTIAL_KEY.search(str(key)))


def credential_keys(value: Any, prefix: str = "") -> list[str]:
    """Dotted paths of every credential key in a nested dict/list."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if is_credential_key(str(key)):
                found.append(path)
            else:
                found.extend(credential_keys(item, path))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(credential_keys(item, f"{prefix}[{i}]"))
    return found


def redact(value: Any) -> Any:
    """Replace values under credential keys with a marker, recursively (other keys untouched)."""
    if isinstance(value, Mapping):
        return {k: (REDACTED if is_credential_key(str(k)) else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def drop_redacted(value: Any) -> Any:
    """Remove credential keys and redaction markers, so nothing redacted is ever sent on."""
    if isinstance(value, Mapping):
        return {
            k: drop_redacted(v) for k, v in value.items() if not is_credential_key(str(k)) and v != REDACTED
        }
    if isinstance(value, list):
        return [drop_redacted(v) for v in value if v != REDACTED]
    return value


def secret_values(extra: Iterable[str] = ()) -> list[str]:
    """Values of credential environment variables (plus ``extra``), longest first."""
    values = {v for k, v in os.environ.items() if _CREDENTIAL_ENV.search(k) and len(v) >= _MIN_SECRET_LEN}
    values.update(v for v in extra if isinstance(v, str) and len(v) >= _MIN_SECRET_LEN)
    return sorted(values, key=len, reverse=True)


def scrub(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every credential value replaced by ``<redacted>``.

    Also replaces the JSON-escaped form of each value, so a serialized record is safe too.
    """
    if not text:
        return text
    import json

    for value in secret_values(extra):
        if value in text:
            text = text.replace(value, REDACTED)
        escaped = json.dumps(value)[1:-1]
        if escaped != value and escaped in text:
            text = text.replace(escaped, REDACTED)
    return text
