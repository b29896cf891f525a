"""The one way tauguard's own code calls an LLM, and the per-role account of a simulation.

:func:`structured` is the one call of every LLM guard backend (the action-guard verifier, the
workflow verifier, the classifier's LLM gate, the LLM dialogue judge): a prompt in, a JSON
answer validated as a pydantic model out, as one :class:`StructuredResult` (the answer or the
failure, the raw text, the call's tokens and cost). It never raises for model-side problems.
:func:`complete` is the raw completion under it (the attack planner calls it directly): it
applies the process's provider discipline (shared per-model rate limits, retries with backoff,
the ``--cache``; see :mod:`tauguard.provider`) and books the call under its role.
tau2's agent and user completions go through the same discipline (``provider.install``) as
roles ``agent`` and ``user``.

A simulation opens a :class:`~tauguard.usage_ledger.UnitLedger`
(:func:`~tauguard.usage_ledger.start_unit`); every call made in its thread is booked there by role: calls, tokens and cost of :func:`complete` calls, plus,
for every role, cache hits, retries and seconds waited in the rate limiter. A cache hit
costs $0 (it was paid for when first stored).

Imports litellm only when a call is made.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from tauguard.strategy_api.guard import GuardUsage
from tauguard.llm_answer import parse_json_answer
from tauguard.secrets import scrub
from tauguard.usage_ledger import book, current

#: The ``system_fingerprint`` of the scripted loopback server (:mod:`tauguard.testing.llm_server`):
#: answers carrying it are plumbing, not a model's.
SCRIPTED_FINGERPRINT = "tauguard-scripted-loopback"
#: Seconds a guard's call may take unless its arguments say otherwise (``timeout``).
DEFAULT_TIMEOUT_S = 120.0
_FAILURE_CHARS = 300  # a provider's error text is cut to this many characters

A = TypeVar("A", bound=BaseModel)

def is_cache_hit(response: Any) -> bool:
    """Whether ``response`` came from the ``--cache`` rather than the provider."""
    hidden = getattr(response, "_hidden_params", None) or {}
    return bool(hidden.get("cache_hit"))


def response_cost(response: Any) -> float:
    """What one completion cost; $0 for a ``--cache`` hit or a model without a price.

    litellm prices every response while answering (``_hidden_params["response_cost"]``, None
    when it has no price): that figure is used rather than pricing the response a second time
    (``completion_cost`` is ~7 % of a completion's CPU). A response litellm did not make
    (no such entry) is priced here.
    """
    if is_cache_hit(response):
        return 0.0
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        return float(hidden["response_cost"] or 0.0)
    import litellm

    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # noqa: BLE001 -- unknown model names (local servers) have no price
        return 0.0


def usage_of(response: Any) -> GuardUsage:
    """Tokens and cost of one completion; $0 for a cache hit or a model without a price."""
    usage = getattr(response, "usage", None)
    cost = response_cost(response)
    return GuardUsage(
        llm_calls=1,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=cost,
    )


def disciplined(role: str, **request: Any) -> Any:
    """``litellm.completion(**request)`` under the run's rate limits, retries and cache; only
    its cache hits, retries and waits are booked under ``role`` (τ²'s agent and user, whose
    calls and tokens the conversation itself counts, call this directly). Raises what the
    provider raised (:class:`~tauguard.provider.ProviderUnavailable` after the last
    retry)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
    import litellm

    from tauguard.provider import state

    litellm.suppress_debug_info = True  # no provider banners on stderr for handled failures
    return state().call(litellm.completion, role=role, **request)


def complete(role: str, model: str, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    """:func:`disciplined`, with the call, its tokens and its cost booked under ``role``."""
    response = disciplined(role, model=model, messages=messages, **kwargs)
    usage = usage_of(response)
    book(role, calls=1, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, cost=usage.cost)
    ledger = current()
    if ledger is not None and getattr(response, "system_fingerprint", None) == SCRIPTED_FINGERPRINT:
        with ledger._lock:
            ledger.scripted += 1
    return response


class StructuredResult(BaseModel, Generic[A]):
    """One structured LLM call: the validated answer or the failure; the raw text and the usage always.

    ``failure_kind`` says which: ``transport`` (timeout, HTTP error, connection failure; no
    answer came back) or ``unparseable`` (an answer came back that is no JSON object of the
    expected shape: ``raw`` holds it). ``usage`` is the call's tokens and cost ($0 for a cache
    hit or a model without a price; one call and no tokens when nothing came back).
    """

    answer: A | None = None
    failure: str | None = None
    failure_kind: Literal["transport", "unparseable"] | None = None
    raw: str | None = None
    usage: GuardUsage = Field(default_factory=GuardUsage)


def _transport_failure(exc: Exception) -> str:
    kind = "timeout" if "timeout" in type(exc).__name__.lower() else "error"
    # Providers sometimes repeat the request's key in their error text: it never leaves here.
    return scrub(f"{kind}: {type(exc).__name__}: {str(exc)[:_FAILURE_CHARS]}")


def _raw_text(response: Any) -> tuple[str | None, str]:
    """The answer's text content (None when there is none) and what to keep as raw output."""
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        content = None
    if isinstance(content, str):
        return content, scrub(content)
    try:
        dumped: Any = response.model_dump()
    except Exception:  # noqa: BLE001 -- only for the raw record
        dumped = str(response)
    return None, scrub(json.dumps(dumped, default=str))


def structured(
    model: str,
    messages: list[dict[str, Any]],
    answer: type[A],
    *,
    llm_args: Mapping[str, Any] | None = None,
    role: str = "guard",
    what: str = "answer",
    timeout: float | None = DEFAULT_TIMEOUT_S,
) -> StructuredResult[A]:
    """Ask ``model`` and validate the JSON object in its answer as ``answer``; never raises for
    model-side problems (they are the result's ``failure``).

    The call goes through :func:`complete` (rate limits, retries, ``--cache``; booked under
    ``role``, a failed call as one call). ``llm_args`` are litellm's arguments (``api_base``,
    ``temperature``, ...); ``timeout`` applies unless they name one (None: litellm's default).
    ``what`` names the answer in failure texts (``unparseable verdict: ...``).
    """
    args = dict(llm_args or {})
    if timeout is not None:
        args.setdefault("timeout", timeout)
    try:
        response = complete(role, model, messages, **args)
    except Exception as exc:  # noqa: BLE001 -- timeouts, HTTP errors, connection failures
        book(role, calls=1)
        return StructuredResult[answer](failure=_transport_failure(exc), failure_kind="transport", usage=GuardUsage(llm_calls=1))  # type: ignore[valid-type]
    usage = usage_of(response)
    content, raw = _raw_text(response)
    try:
        parsed = parse_json_answer(content, answer, what)
    except ValueError as exc:
        return StructuredResult[answer](failure=f"unparseable {what}: {exc}", failure_kind="unparseable", raw=raw, usage=usage)  # type: ignore[valid-type]
    return StructuredResult[answer](answer=parsed, raw=raw, usage=usage)  # type: ignore[valid-type]
