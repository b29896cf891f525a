"""Process compliance: a per-trial rubric computed from the stored trace alone.

τ²'s end-state reward cannot see a skipped read or confirmation. The rubric checks the order
of events around each write (identification, target read, explicit confirmation, closed-set
reasons, no write after a refusal) and telecom's diagnose-before-fix and verify-after-act,
each check citing a clause id. `show` reports PolicyGuide's process-valid rate (§4.7: reward 1
AND every applicable check, over all trials), Step-TCR and Trace-TCR (over outcome-passing traces
with an applicable check; :mod:`tauguard.analysis.metrics`), and `show`, `compare` and `check` report
process_valid^k, tauguard's extension (a pass^k of the same event; the paper's rate is not one).
Imports neither tau2 nor litellm.
"""

from tauguard.process.model import RUBRIC_VERSION, ProcessCheck, ProcessReport
from tauguard.process.rubric import DomainRubric, load
from tauguard.process.score import (
    conversation_from_messages,
    record_process,
    score_conversation,
    score_record,
)

__all__ = [
    "RUBRIC_VERSION", "DomainRubric", "ProcessCheck", "ProcessReport", "conversation_from_messages",
    "load", "record_process", "score_conversation", "score_record",
]
