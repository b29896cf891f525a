"""Provider discipline for real-LLM runs: shared rate limits and retries with backoff.

Every completion tau2's LLMAgent and UserSimulator make goes through
``tau2.utils.llm_utils.completion``; :func:`install` replaces it (once per process) with a
wrapper that

- waits for the model's rate limits (requests and tokens per minute), shared by every
  simulation of the process (a run with W worker processes gives each 1/W of the limit);
- retries 429, 5xx, timeouts and connection errors with exponential backoff and jitter,
  honouring the provider's ``Retry-After``; after the last retry it raises
  :class:`ProviderUnavailable`, which the unit records as an infrastructure error (never a
  task failure), so ``--resume`` runs it again.

litellm's own retries are switched off on these calls (``num_retries=0``) so backoff
happens in one place. Imports litellm only when installed.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


class ProviderUnavailable(RuntimeError):
    """The provider kept failing after every retry (an infrastructure error)."""


@dataclass(frozen=True)
class RateLimit:
    """Requests (and optionally tokens) per minute for one model."""

    rpm: float
    tpm: float | None = None

    @classmethod
    def parse(cls, text: str) -> tuple[str, "RateLimit"]:
        """``MODEL=RPM[,TPM]`` (the ``--rate-limit`` syntax) -> (model, limit)."""
        model, sep, values = text.partition("=")
        parts = [p.strip() for p in values.split(",")] if sep else []
        try:
            numbers = [float(p) for p in parts]
        except ValueError:
            numbers = []
        if not model.strip() or not 1 <= len(numbers) <= 2 or any(n <= 0 for n in numbers):
            raise ValueError(f"invalid --rate-limit '{text}'; expected MODEL=RPM[,TPM] with positive numbers")
        return model.strip(), cls(rpm=numbers[0], tpm=numbers[1] if len(numbers) == 2 else None)


class TokenBucket:
    """A reservation-style token bucket: ``reserve`` returns how long the caller must wait.

    Reservations are granted in arrival order and the level may go negative, so callers
    never starve each other and waits add up exactly to the configured rate.
    """

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute / 60.0)  # at most one second's worth at once
        self.level = self.capacity
        self._clock = clock
        self._stamp = clock()
        self._lock = threading.Lock()

    def reserve(self, amount: float = 1.0) -> float:
        """Take ``amount``; seconds to wait before using it."""
        with self._lock:
            now = self._clock()
            self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
            self._stamp = now
            self.level -= amount
            return max(0.0, -self.level / self.rate)

    def adjust(self, amount: float) -> None:
        """Take (or give back, if negative) ``amount`` without waiting (usage known afterwards)."""
        with self._lock:
            self.level -= amount


@dataclass
class RetryPolicy:
    """How often and how long to retry a failing completion."""

    max_retries: int = 5
    base_s: float = 1.0
    cap_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before retry ``attempt`` (0-based): ``Retry-After`` when given, else
        exponential backoff with equal jitter."""
        if retry_after is not None:
            return min(self.cap_s, retry_after) + self.rng.uniform(0, 0.1 * self.base_s)
        ceiling = min(self.cap_s, self.base_s * 2**attempt)
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status behind a provider error, if any."""
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
    try:
        return int(status) if status is not None else None
    except (TypeError, ValueError):
        return None


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are worth retrying; bad requests are not."""
    status = status_of(exc)
    if status is not None:
        return status in RETRYABLE_STATUS
    name = type(exc).__name__
    return any(key in name for key in ("Timeout", "Connection", "RateLimit", "ServiceUnavailable", "InternalServer"))


def retry_after_s(exc: BaseException) -> float | None:
    """The provider's ``Retry-After`` (seconds or an HTTP date), if it sent one."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(str(value))
        return max(0.0, parsed.timestamp() - time.time()) if parsed is not None else None


@dataclass
class ProviderState:
    """Per-process limits, retry policy and the time spent waiting (for progress displays)."""

    limits: dict[str, RateLimit] = field(default_factory=dict)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    buckets: dict[str, tuple[TokenBucket, TokenBucket | None]] = field(default_factory=dict)
    waited_s: float = 0.0
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _buckets(self, model: str) -> tuple[TokenBucket, TokenBucket | None] | None:
        limit = self.limits.get(model)
        if limit is None:
            return None
        with self._lock:
            if model not in self.buckets:
                self.buckets[model] = (TokenBucket(limit.rpm), TokenBucket(limit.tpm) if limit.tpm else None)
            return self.buckets[model]

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            with self._lock:
                self.waited_s += seconds
            time.sleep(seconds)

    def call(self, completion: Callable[..., Any], **kwargs: Any) -> Any:
        """One completion under the model's limits, retried as the policy says."""
        model = str(kwargs.get("model"))
        buckets = self._buckets(model)
        estimate = len(json.dumps(kwargs.get("messages"), default=str)) / 4  # ~4 characters a token
        kwargs["num_retries"] = 0
        for attempt in range(self.policy.max_retries + 1):
            if buckets is not None:
                wait = buckets[0].reserve(1)
                if buckets[1] is not None:
                    wait = max(wait, buckets[1].reserve(estimate))
                self._wait(wait)
            try:
                response = completion(**kwargs)
            except Exception as exc:
                if buckets is not None and buckets[1] is not None:
                    buckets[1].adjust(-estimate)  # nothing was processed
                if not is_retryable(exc):
                    raise
                if attempt == self.policy.max_retries:
                    raise ProviderUnavailable(
                        f"{model}: gave up after {self.policy.max_retries} retries: {type(exc).__name__}: {exc}"
                    ) from exc
                with self._lock:
                    self.retries += 1
                self._wait(self.policy.delay(attempt, retry_after_s(exc)))
                continue
            if buckets is not None and buckets[1] is not None:
                usage = getattr(response, "usage", None)
                used = getattr(usage, "total_tokens", None) if usage is not None else None
                if used is not None:
                    buckets[1].adjust(float(used) - estimate)
            return response
        raise AssertionError("unreachable")


_STATE = ProviderState()
_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


def install(limits: dict[str, RateLimit] | None = None, max_retries: int | None = None, share: int = 1) -> ProviderState:
    """Route tau2's completions through :class:`ProviderState` (idempotent; updates limits).

    ``share``: how many processes split the limits (each gets ``1/share``).
    """
    global _INSTALLED
    with _INSTALL_LOCK:
        scaled = {m: RateLimit(l.rpm / share, l.tpm / share if l.tpm else None) for m, l in (limits or {}).items()}
        if scaled != _STATE.limits:
            _STATE.limits = scaled
            _STATE.buckets.clear()
        if max_retries is not None:
            _STATE.policy.max_retries = max_retries
        if not _INSTALLED:
            import tau2.utils.llm_utils as llm_utils

            original = llm_utils.completion

            def completion(**kwargs: Any) -> Any:
                return _STATE.call(original, **kwargs)

            llm_utils.completion = completion
            _INSTALLED = True
    return _STATE
