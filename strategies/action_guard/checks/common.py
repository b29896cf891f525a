"""Checks shared by all domains: explicit confirmation, and a read of the target entity."""

from __future__ import annotations

import re

from tauguard_strategies.action_guard.checks.base import (
    CheckContext,
    CheckResult,
    check,
    met,
    missing,
    read,
)
from tauguard_strategies.action_guard.dialogue import confirmation_or_why

_PRICE = re.compile(r"(\$\s?\d|\d+(?:\.\d+)?\s?(?:usd|dollars?)\b|\b(?:price|cost|costs|charge|charged|fee)\b)", re.IGNORECASE)


@check("dialogue.explicit_confirmation")
def explicit_confirmation(ctx: CheckContext) -> CheckResult:
    """The agent stated this action and the user then replied yes.

    params: ``with_price`` (bool) -- the statement must also mention a price.
    """
    must = _PRICE if ctx.params.get("with_price") else None
    found, why = confirmation_or_why(ctx.evidence, ctx.call, ctx.judge, ctx.domain, must_mention=must)
    if found is None:
        what = "the action details and its price" if must else "the action details"
        because = f" (dialogue judge: {why})" if why else ""
        return missing(f"no explicit user 'yes' after the agent stated {what} of {ctx.call.name}{because}")
    return met(statement=found.statement.text, reply=found.reply.text)


@check("tool.entity_read")
def entity_read(ctx: CheckContext) -> CheckResult:
    """The entity the call targets was seen in a tool result before the call.

    params: ``kind`` (reservation / order / user / bill / line / customer), ``arg`` (the
    call argument holding its id), ``read`` and ``read_arg`` (the read to suggest).
    """
    kind, arg = ctx.params["kind"], ctx.params["arg"]
    entity_id = ctx.arg(arg)
    if ctx.evidence.entity(kind, entity_id) is not None:
        return met(f"{kind} {entity_id} was read")
    suggestion = read(ctx.params["read"], **{ctx.params.get("read_arg", arg): entity_id})
    return missing(f"{kind} {entity_id} was not read before the call", suggestion)
