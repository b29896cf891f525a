"""``--cache DIR``: completions stored on disk, keyed on the full request, for re-runs.

A request's key is the SHA-256 of its canonical JSON (model, messages, tools, tool choice,
temperature, seed, api_base and every other argument) without credentials and transport
settings (timeouts, retry counts, headers), so an API key never enters a key and a changed
key or timeout still hits. The agent and user send their trial's seed, so the trials of a
task stay distinct; a guard's request carries no seed and is answered once per content.

Storage is :mod:`diskcache` (SQLite underneath): safe with many threads and several
processes reading and writing at once. litellm's own disk cache is not used: the litellm
this project pins removed that backend.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tauguard.secrets import is_credential_key, mask_userinfo, scrub

# Arguments that change how a request travels, not what it asks.
_TRANSPORT = frozenset(
    {"timeout", "request_timeout", "num_retries", "max_retries", "caching", "metadata", "headers", "extra_headers", "stream_timeout"}
)


def request_key(kwargs: dict[str, Any]) -> str:
    """The cache key of a completion request (hex SHA-256; no credential goes into it)."""
    material = {k: v for k, v in kwargs.items() if k not in _TRANSPORT and not is_credential_key(k) and v is not None}
    for url in ("api_base", "base_url"):  # a URL's userinfo is a credential, not part of the request
        if isinstance(material.get(url), str):
            material[url] = mask_userinfo(material[url])
    text = json.dumps(material, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Completions by request key, in ``directory`` (created when missing)."""

    def __init__(self, directory: str | Path) -> None:
        import diskcache

        self.directory = str(directory)
        Path(self.directory).mkdir(parents=True, exist_ok=True)
        # A generous timeout: many writers at once wait for SQLite's lock instead of failing.
        self._store = diskcache.Cache(self.directory, timeout=60)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response (a JSON-able dict), or None."""
        text = self._store.get(key)
        return json.loads(text) if isinstance(text, str) else None

    def put(self, key: str, response: dict[str, Any]) -> None:
        """Store a response under ``key`` (the last writer of the same request wins), with
        every credential value scrubbed (a provider may echo the request's key or headers)."""
        self._store.set(key, scrub(json.dumps(response, default=str)))

    def __len__(self) -> int:
        return len(self._store)
