"""Provider discipline for real-LLM runs: shared rate limits, retries with backoff, the cache.

Every completion of a run goes through :meth:`ProviderState.call`: the agent's and the user
simulator's (tauguard's subclasses of τ²'s, :mod:`tauguard.agents.llm_generate`; τ² itself is
not patched) and tauguard's own (:func:`tauguard.llm_call.complete`). It

- answers from the ``--cache`` when it holds the same request (:mod:`.response_cache`);
- waits for the model's rate limits (requests and tokens per minute), shared by every
  simulation of the process (a run with W worker processes gives each 1/W of the limit);
- retries 429, 5xx, timeouts and connection errors (the loop is tenacity's) with exponential
  backoff and equal jitter, honouring the provider's ``Retry-After``, each attempt under a
  timeout and no retry past a deadline; after the last retry it raises
  :class:`ProviderUnavailable`, which the unit records as an infrastructure error (never a
  task failure), so ``--resume`` runs it again.

litellm's and the OpenAI client's own retries are switched off (``num_retries=0``, ``max_retries=0``) so backoff
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

from tauguard.errors import TauguardInputError
from tauguard.response_cache import ResponseCache, request_key
from tauguard.usage_ledger import book

# Sent as the key to an api_base server that needs none (config no_key): OpenAI-style clients
# refuse to send a request without one.
NO_KEY = "no-key-needed"
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


class ProviderUnavailable(RuntimeError):
    """The provider kept failing after every retry (an infrastructure error)."""


class CallsStopped(RuntimeError):
    """The run is stopping (Ctrl-C, SIGTERM): no further completion is made."""


# Set when the run stops early: every simulation thread's next completion, retry or backoff
# wait ends at once instead of finishing the conversation (minutes with a slow provider).
_STOPPING = threading.Event()


def stop_calls() -> None:
    """Make no further completion in this process (the run is stopping)."""
    _STOPPING.set()


def resume_calls() -> None:
    """Allow completions again (a new batch of simulations starts)."""
    _STOPPING.clear()


def _check_not_stopping() -> None:
    if _STOPPING.is_set():
        raise CallsStopped("the run is stopping: no further completion")


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
        from tauguard.bounds import BOUNDS

        limit = BOUNDS["--rate-limit RPM / TPM"]
        # `not low <= n <= high` also refuses NaN, which compares false with everything.
        if not model.strip() or not 1 <= len(numbers) <= 2 or any(not limit.low <= n <= limit.high for n in numbers):
            raise TauguardInputError(
                f"invalid --rate-limit '{text}'; expected MODEL=RPM[,TPM] with numbers in {limit.describe()}"
            )
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
    # A hung provider holds one completion at most ``timeout_s`` per attempt, and no retry starts
    # once ``deadline_s`` have passed since the first: at most deadline_s + timeout_s (12 min)
    # instead of litellm's 600 s x 6 attempts. A unit whose completion gives up ends as an
    # infrastructure error (``--resume`` re-runs it). ``timeout`` in llm_args overrides the first.
    timeout_s: float = 120.0
    deadline_s: float = 600.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before retry ``attempt`` (0-based): ``Retry-After`` when given, else
        exponential backoff with equal jitter."""
        if retry_after is not None:
            return min(self.cap_s, retry_after) + self.rng.uniform(0, 0.1 * self.base_s)
        ceiling: float = min(self.cap_s, self.base_s * 2**attempt)  # int ** int is Any to mypy (a negative exponent gives a float)
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
    """Per-process limits, retry policy, response cache, and the time spent waiting."""

    limits: dict[str, RateLimit] = field(default_factory=dict)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    buckets: dict[str, tuple[TokenBucket, TokenBucket | None]] = field(default_factory=dict)
    cache: ResponseCache | None = None
    no_key: bool = False  # api_base servers need no key: send NO_KEY, never the provider's
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

    def _wait(self, seconds: float, role: str) -> None:
        if seconds > 0:
            with self._lock:
                self.waited_s += seconds
            book(role, waited_s=seconds)
            _STOPPING.wait(seconds)  # a stop ends the wait at once
        _check_not_stopping()

    def call(self, completion: Callable[..., Any], role: str = "llm", **kwargs: Any) -> Any:
        """One completion under the model's limits, retried as the policy says, answered
        from the cache when it holds the request (marked ``_hidden_params["cache_hit"]``).

        A ``num_retries`` (or ``max_retries``) in the call's arguments sets its number of
        retries (default: the policy's); with none, a failure is raised as it came.
        """
        model = str(kwargs.get("model"))
        cache = self.cache if kwargs.get("caching") is not False else None
        key = request_key(kwargs) if self.cache is not None else None
        if cache is not None and key is not None:
            stored = cache.get(key)
            if stored is not None:
                book(role, cache_hits=1)
                return _from_cache(stored)
        if self.no_key and (kwargs.get("api_base") or kwargs.get("base_url")):
            kwargs["api_key"] = NO_KEY  # the provider's own key never goes to a keyless server
        asked = kwargs.get("num_retries", kwargs.get("max_retries"))
        max_retries = self.policy.max_retries if asked is None else max(0, int(asked))
        buckets = self._buckets(model)
        # ~4 characters a token; serialising the conversation costs, so only under a token limit.
        estimate = len(json.dumps(kwargs.get("messages"), default=str)) / 4 if buckets and buckets[1] else 0.0
        kwargs["num_retries"] = 0  # litellm's and the OpenAI client's own retries: backoff is ours
        kwargs["max_retries"] = 0
        if kwargs.get("timeout") is None:  # after the cache key: the key does not change
            kwargs["timeout"] = self.policy.timeout_s
        return self._attempts(completion, role, model, buckets, estimate, max_retries, key, kwargs)

    def _attempts(
        self, completion: Callable[..., Any], role: str, model: str, buckets: tuple[TokenBucket, TokenBucket | None] | None,
        estimate: float, max_retries: int, key: str | None, kwargs: dict[str, Any],
    ) -> Any:
        """The attempts of one completion, retried by tenacity: retryable errors only
        (:func:`is_retryable`), waits from :meth:`RetryPolicy.delay` (``Retry-After`` or equal
        jitter), slept through :meth:`_wait` (booked, ended by a stop), no more than
        ``max_retries`` retries and none that would start past ``policy.deadline_s``."""
        import tenacity

        def attempt() -> Any:
            _check_not_stopping()
            if buckets is not None:
                wait = buckets[0].reserve(1)
                if buckets[1] is not None:
                    wait = max(wait, buckets[1].reserve(estimate))
                self._wait(wait, role)
            try:
                return completion(**kwargs)
            except Exception:
                if buckets is not None and buckets[1] is not None:
                    buckets[1].adjust(-estimate)  # nothing was processed
                raise

        def delay(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            return self.policy.delay(state.attempt_number - 1, retry_after_s(exc) if exc is not None else None)

        def counted(state: tenacity.RetryCallState) -> None:
            with self._lock:
                self.retries += 1
            book(role, retries=1)

        def give_up(state: tenacity.RetryCallState) -> Any:
            exc = state.outcome.exception() if state.outcome is not None else None
            assert exc is not None  # tenacity gives up only after a failed attempt
            if max_retries == 0:
                raise exc  # no retries asked: the failure as it came
            done = state.attempt_number - 1
            if done >= max_retries:
                raise ProviderUnavailable(f"{model}: gave up after {max_retries} retries: {type(exc).__name__}: {exc}") from exc
            raise ProviderUnavailable(
                f"{model}: gave up after {done} retries and {state.seconds_since_start:.0f} s "
                f"(no retry starts past {self.policy.deadline_s:g} s): {type(exc).__name__}: {exc}"
            ) from exc

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(is_retryable),
            stop=tenacity.stop_after_attempt(max_retries + 1) | tenacity.stop_before_delay(self.policy.deadline_s),
            wait=delay,
            sleep=lambda seconds: self._wait(seconds, role),
            before_sleep=counted,
            retry_error_callback=give_up,
        )
        response = retrying(attempt)
        if buckets is not None and buckets[1] is not None:
            usage = getattr(response, "usage", None)
            used = getattr(usage, "total_tokens", None) if usage is not None else None
            if used is not None:
                buckets[1].adjust(float(used) - estimate)
        if self.cache is not None and key is not None:
            self.cache.put(key, response.model_dump(mode="json"))
        return response


def _from_cache(stored: dict[str, Any]) -> Any:
    from litellm import ModelResponse

    response = ModelResponse(**stored)
    response._hidden_params["cache_hit"] = True
    return response


_STATE = ProviderState()
_INSTALL_LOCK = threading.Lock()

# httpx's default pool, which litellm builds its sync clients with: one per process, at most
# 100 connections, 20 of them kept open while idle.
_POOL_USERS = 16  # simulation threads per pool shard: below the 20 idle connections a pool keeps
_POOL_LOCK = threading.Lock()
_sharded_session: Any = None  # the client this module gave litellm: a caller's own is never replaced
_sharded_shards = 0


def _sharded_client(shards: int) -> Any:
    """An ``httpx.Client`` built as litellm builds its own sync one (``verify`` from litellm's SSL
    settings, redirects followed, litellm's HTTP/2 switch; the environment's proxies), whose
    transport sends each thread's requests through one of ``shards`` ordinary httpx transports,
    chosen by the thread's id: each shard is its own connection pool."""
    import httpx
    from litellm.llms.custom_httpx.http_handler import get_ssl_configuration, http2_enabled

    verify, http2 = get_ssl_configuration(), http2_enabled()

    class ShardedTransport(httpx.BaseTransport):
        def __init__(self) -> None:
            self.pools = [httpx.HTTPTransport(verify=verify, http2=http2) for _ in range(shards)]

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return self.pools[threading.get_native_id() % shards].handle_request(request)

        def close(self) -> None:
            for pool in self.pools:
                pool.close()

    return httpx.Client(verify=verify, follow_redirects=True, http2=http2, transport=ShardedTransport())


def shard_connection_pool(in_flight: int) -> None:
    """Split litellm's connection pool of this process into shards of ~16 simulation threads.

    litellm's sync clients in a process share one httpx pool, and httpcore reassigns
    connections under one lock after every request and response, scanning all connections and
    queued requests each time (its idle-connection check is quadratic in the connections). With
    128 simulation threads in a process (C = 256 on 2 workers) the pool is full (100
    connections; the other requests queue for one) and that bookkeeping grows the CPU of every
    completion; a larger pool scans more and cost more (measured). Sharded, each pool serves a
    few threads and holds a few connections. The requests, their bytes and litellm's handling
    are unchanged: litellm's ``client_session`` (its setting for the sync HTTP client, which
    every sync client it builds then wraps) becomes :func:`_sharded_client`. Up to 20 threads
    (httpx's idle connections per pool) nothing changes; a ``client_session`` the caller set is
    kept.
    """
    if in_flight <= _POOL_USERS + 4:
        return
    global _sharded_session, _sharded_shards
    import litellm

    try:  # litellm's own SSL and HTTP/2 settings; litellm is not pinned, so a release without them keeps its pool
        from litellm.llms.custom_httpx.http_handler import get_ssl_configuration, http2_enabled  # noqa: F401
    except ImportError:
        return

    shards = -(-in_flight // _POOL_USERS)
    with _POOL_LOCK:
        current = litellm.client_session
        if current is not None and (current is not _sharded_session or _sharded_shards >= shards):
            return  # the caller's own client, or already sharded as finely
        litellm.client_session = _sharded_session = _sharded_client(shards)
        _sharded_shards = shards


def state() -> ProviderState:
    """This process's provider discipline (defaults until :func:`install`)."""
    return _STATE


def install(
    limits: dict[str, RateLimit] | None = None, max_retries: int | None = None, share: int = 1, cache: str | None = None,
    no_key: bool = False,
) -> ProviderState:
    """Set this process's limits, retries, key handling and cache directory (idempotent).

    ``share``: how many processes split the limits (each gets ``1/share``).
    """
    with _INSTALL_LOCK:
        scaled = {m: RateLimit(lim.rpm / share, lim.tpm / share if lim.tpm else None) for m, lim in (limits or {}).items()}
        if scaled != _STATE.limits:
            _STATE.limits = scaled
            _STATE.buckets.clear()
        if max_retries is not None:
            _STATE.policy.max_retries = max_retries
        _STATE.no_key = no_key
        if cache is None:
            _STATE.cache = None
        elif _STATE.cache is None or _STATE.cache.directory != cache:
            _STATE.cache = ResponseCache(cache)
    return _STATE
