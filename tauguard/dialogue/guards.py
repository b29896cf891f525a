"""The dialogue judge a guard session uses, from its ``dialogue`` strategy option."""

from __future__ import annotations

from tauguard.dialogue import Backend, DialogueJudge, judge
from tauguard.strategy_api.guard import SessionContext


def dialogue_judge(backend: Backend, context: SessionContext) -> DialogueJudge:
    """The judge of ``backend`` for a session (``llm`` uses the run's ``--guard-llm`` and its arguments).

    Raises ValueError, naming the option, when ``llm`` is chosen without a guard model.
    """
    if backend == "llm" and not context.guard_llm:
        raise ValueError("strategy option dialogue=llm needs a guard model (--guard-llm)")
    return judge(backend, context.guard_llm, context.guard_llm_args)
