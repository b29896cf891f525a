"""Credentials: which keys are credentials, and scrubbing their values from text.

API keys reach tauguard only through the environment. Config files and ``--llm-args`` may
not carry credential keys, and every string written to run files, logs, progress lines or
reports is scrubbed of the values of credential environment variables, because providers
sometimes echo the request's Authorization header in their error text.

Beyond keys named as credentials, every header value (``extra_headers``, ``headers``...: a
subscription key or a cookie looks like any other header) and every URL's userinfo
(``http://user:password@host``) in a config is a secret: redacted in run files, remembered
for scrubbing (:func:`remember_config_secrets`), and never sent on as the redaction marker.

Scrubbing is linear in the text's length on any input, because it runs on every record line a
run writes: about 48 µs for a 16.6 kB record line, 0.18 ms for 100 kB of letters before an ``@``
(once 11 s, a backtracking regex), 1.5 ms for 1 MB (``python bench/bench_scrub.py``, 2-core machine).

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import base64
import os
import re
import urllib.parse
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
# The userinfo of a URL (scheme://user:password@host) is found from each "://" outward (see
# _userinfo_spans): one regex over the whole text backtracked over every start position, which is
# quadratic on a long run of letters (100 kB took ~10 s of CPU).
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_USERINFO_TAIL = re.compile(r"[^/\s@?#]+(?=@)")
# Secrets found in this process's configs (header values, URL userinfo), scrubbed like env keys.
_REMEMBERED: set[str] = set()


def _is_headers_key(key: str) -> bool:
    return str(key).lower().replace("-", "_").endswith("headers")


def _userinfo_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of every URL userinfo in ``text``: the part between a scheme's
    ``://`` (the scheme a letter then letters, digits, ``+ . -``) and the next ``@``, with no
    ``/``, ``?``, ``#`` or whitespace in it.

    Linear in ``len(text)``: the scheme run before one ``://`` and the userinfo run after it
    contain no ``/``, so the runs scanned for different ``://`` never overlap.
    """
    spans: list[tuple[int, int]] = []
    pos = text.find("://")
    while pos != -1:
        first = pos
        while first > 0 and text[first - 1] in _SCHEME_CHARS:
            first -= 1
        while first < pos and not text[first].isalpha():
            first += 1  # a scheme starts with a letter
        start = pos + 3
        if first < pos and text[first].isascii():
            match = _USERINFO_TAIL.match(text, start)
            if match is not None:
                spans.append((start, match.end()))
        pos = text.find("://", start)
    return spans


def mask_userinfo(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by the redaction marker."""
    if "@" not in text or "://" not in text:
        return text
    spans = _userinfo_spans(text)
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts += [text[last:start], REDACTED]
        last = end
    parts.append(text[last:])
    return "".join(parts)


def config_secrets(value: Any, under_headers: bool = False) -> list[str]:
    """The secret values of a nested config: every header value and every URL userinfo
    (the whole ``user:password`` and the password alone)."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            found.extend(config_secrets(item, under_headers or _is_headers_key(str(key))))
    elif isinstance(value, list):
        for item in value:
            found.extend(config_secrets(item, under_headers))
    elif isinstance(value, str):
        if under_headers:
            found.append(value)
        for start, end in _userinfo_spans(value) if "@" in value else ():
            raw = value[start:end]
            userinfo = urllib.parse.unquote(raw)
            # HTTP clients send userinfo as Basic auth, which a provider may echo too
            found += [raw, userinfo, userinfo.partition(":")[2], base64.b64encode(userinfo.encode()).decode()]
    return [v for v in found if v and v != REDACTED]


def credential_values(value: Any, under_credential: bool = False) -> list[str]:
    """Every string under a credential key of a nested config (``{"api_key": "sk-..."}``), at
    any depth: what a refused config still carried, to scrub from a traceback."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            found.extend(credential_values(item, under_credential or is_credential_key(str(key))))
    elif isinstance(value, list):
        for item in value:
            found.extend(credential_values(item, under_credential))
    elif isinstance(value, str) and under_credential and value:
        found.append(value)
    return found


def remember_config_secrets(value: Any) -> None:
    """Scrub the secrets of a config (see :func:`config_secrets`) from everything this process writes."""
    _REMEMBERED.update(v for v in config_secrets(value) if len(v) >= _MIN_SECRET_LEN)


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


def redact(value: Any, under_headers: bool = False) -> Any:
    """Replace values under credential keys, every header value and every URL's userinfo
    with a marker, recursively (other values untouched)."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if is_credential_key(str(k)) else redact(v, under_headers or _is_headers_key(str(k))))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v, under_headers) for v in value]
    if under_headers and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return REDACTED
    if isinstance(value, str):
        return mask_userinfo(value)
    return value


def drop_redacted(value: Any) -> Any:
    """Remove credential keys and redaction markers, so nothing redacted is ever sent on: a
    redacted header is left out, and a URL whose userinfo was redacted goes without it."""
    if isinstance(value, Mapping):
        return {
            k: drop_redacted(v) for k, v in value.items() if not is_credential_key(str(k)) and v != REDACTED
        }
    if isinstance(value, list):
        return [drop_redacted(v) for v in value if v != REDACTED]
    if isinstance(value, str) and f"{REDACTED}@" in value:
        return value.replace(f"{REDACTED}@", "")
    return value


def secret_values(extra: Iterable[str] = ()) -> list[str]:
    """Values of credential environment variables (plus ``extra``), longest first."""
    values = {v for k, v in os.environ.items() if _CREDENTIAL_ENV.search(k) and len(v) >= _MIN_SECRET_LEN}
    values.update(_REMEMBERED)
    values.update(v for v in extra if isinstance(v, str) and len(v) >= _MIN_SECRET_LEN)
    return sorted(values, key=len, reverse=True)


def scrub(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every credential value and every URL userinfo replaced by ``<redacted>``.

    Also replaces the JSON-escaped form of each value, so a serialized record is safe too.
    """
    if not text:
        return text
    import json

    text = mask_userinfo(text)

    for value in secret_values(extra):
        if value in text:
            text = text.replace(value, REDACTED)
        escaped = json.dumps(value)[1:-1]
        if escaped != value and escaped in text:
            text = text.replace(escaped, REDACTED)
    return text
