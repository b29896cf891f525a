"""The one wording of "explicit confirmation" that every LLM prompt in tauguard uses.

The action-guard verifier, the workflow verifier, the classifier and the LLM dialogue judge
all tell their model what counts as the user's explicit yes with :data:`CONFIRMATION_RULE`, so
the LLM judges answer the question the compiled judge answers (:mod:`tauguard.dialogue.judge`).
"""

from __future__ import annotations

CONFIRMATION_RULE = (
    "An explicit confirmation is the user's reply agreeing (yes, go ahead, please do; in any language, "
    "anywhere in the reply) to an agent message that asked for the go-ahead and stated this action with its "
    "user-visible details (by value, by an unambiguous reference, or in a summary of several actions). "
    "A conditional yes, a question back, a refusal, or an answer to a different question (a payment method, a "
    "choice between options) is not one, and a confirmation ends when the user later changes the details."
)
