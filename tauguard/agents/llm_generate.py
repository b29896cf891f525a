"""One τ²-shaped model turn (an ``AssistantMessage``) made through tauguard's LLM layer.

τ²'s ``LLMAgent`` and ``UserSimulator`` call ``tau2.utils.llm_utils.generate``, which calls
litellm itself. tauguard's subclasses (:mod:`tauguard.agents.llm`, :mod:`tauguard.agents.llm_user`)
call :func:`generate` instead, so their completions get the run's provider discipline (rate
limits, retries, ``--cache``; :mod:`tauguard.provider`) under their role without
patching τ².

The message is the one τ²'s ``generate`` builds from the same response (content, tool calls,
cost, token usage, ``raw_data``), and an empty answer (no text, no tool call) is asked again the
same number of times, uncached. Two things differ, neither visible in a record:

- the cost is the one litellm priced the response at while answering (its
  ``_hidden_params["response_cost"]``) instead of a second ``completion_cost`` of the same
  response (~7 % of a completion's CPU): $0 for an unpriced model, as τ² reports, and for a
  ``--cache`` hit (paid for when it was stored);
- τ²'s warnings about a cut-off or empty answer go to this module's (stdlib) logger at debug
  level, not to loguru and stdout.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.llm_call import disciplined, response_cost

_LOG = logging.getLogger(__name__)


def generate(
    role: str, model: str, messages: list[Any], tools: list[Any] | None = None, tool_choice: str | None = None,
    **llm_args: Any,
) -> Any:
    """The model's next message for ``messages`` (τ² messages) as τ²'s ``AssistantMessage``.

    ``role`` (``agent`` or ``user``) books the call's cache hits, retries and waits; ``tools``
    are objects with an ``openai_schema``; ``llm_args`` go to litellm as they are.
    """
    empty_retries = int(llm_args.get("num_retries", t2.llm_empty_answer_retries()))
    request = dict(llm_args)
    schemas = [tool.openai_schema for tool in tools] if tools else None
    if schemas and tool_choice is None:
        tool_choice = "auto"
    converted = t2.llm_request_messages()(messages)
    for attempt in range(empty_retries + 1):
        response = disciplined(role, model=model, messages=converted, tools=schemas, tool_choice=tool_choice, **request)
        choice = response.choices[0]
        if choice.finish_reason == "length":
            _LOG.debug("%s: the answer was cut off at the token limit", model)
        if choice.message.role != "assistant":
            raise AssertionError("The response should be an assistant message")
        content = choice.message.content
        calls = choice.message.tool_calls or []
        if (content is None or not content.strip()) and not calls and attempt < empty_retries:
            _LOG.debug("%s: empty answer, asking again (%d/%d)", model, attempt + 1, empty_retries)
            request["caching"] = False  # the same empty answer must not come back from a cache
            continue
        usage = getattr(response, "usage", None)
        return t2.AssistantMessage(
            role="assistant",
            content=content,
            tool_calls=[
                t2.ToolCall(id=c.id, name=c.function.name, arguments=json.loads(c.function.arguments)) for c in calls
            ] or None,
            cost=response_cost(response),
            usage=None if usage is None else {"completion_tokens": usage.completion_tokens, "prompt_tokens": usage.prompt_tokens},
            raw_data=choice.to_dict(),
        )
    raise AssertionError("unreachable: the last attempt returns")
