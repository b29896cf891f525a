"""Cross-check of the two labelled data sets made from the same real conversations.

The real-write benchmark (:mod:`tauguard.benchmark.real_writes`) labels each agent WRITE
``complies``/``violates``; the confirmation cases (:mod:`tauguard.dialogue.cases`) label each
(statement, reply, write) triple ``confirmed``/``not_confirmed``. Airline and retail policy require
an explicit yes before every write, so the two must agree:

* a write labelled ``complies`` needs at least one case of it ``confirmed`` (writes without any
  case are not checked; ``repeat`` cases are judged by a separate convention and are ignored);
* a write labelled ``violates`` citing only the explicit-confirmation clause must have no case
  of it ``confirmed``.

Accepted disagreements (a yes outside the cases' window, say) are listed with a reason in
``label_consistency_accepted.toml``. This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from tauguard.benchmark.real_writes import LabelledWrite, load_labels
from tauguard.datafiles import load_toml
from tauguard.dialogue.cases import ConfirmationCase, load_cases

ACCEPTED_FILE = Path(__file__).parent / "label_consistency_accepted.toml"
#: The clause that makes an explicit yes a precondition of every write, per domain.
CONFIRMATION_CLAUSES = {"airline": "airline.explicit_confirmation", "retail": "retail.explicit_confirmation"}


class Contradiction(BaseModel):
    """One write whose policy label disagrees with its confirmation cases."""

    model_config = ConfigDict(extra="forbid")

    write_id: str
    kind: Literal["complies_unconfirmed", "violates_confirmed"]
    write_label: str
    case_ids: list[str]  # the non-repeat cases of the write


class AcceptedContradiction(BaseModel):
    """A contradiction kept on purpose, with the reason."""

    model_config = ConfigDict(extra="forbid")

    write_id: str
    kind: Literal["complies_unconfirmed", "violates_confirmed"]
    reason: str


class AcceptedFile(BaseModel):
    """``label_consistency_accepted.toml``."""

    model_config = ConfigDict(extra="forbid")

    accepted: list[AcceptedContradiction] = []


def write_id_of(case: ConfirmationCase) -> str:
    """The real-write id (``stem:sim:msg:call``) a case is about."""
    return case.id.rsplit(":", 1)[0]


def contradictions(writes: Sequence[LabelledWrite] | None = None,
                   cases: Sequence[ConfirmationCase] | None = None) -> list[Contradiction]:
    """Every write whose label contradicts its (non-repeat) confirmation cases, in id order."""
    by_write: dict[str, list[ConfirmationCase]] = defaultdict(list)
    for case in load_cases() if cases is None else cases:
        if case.case_type != "repeat":
            by_write[write_id_of(case)].append(case)
    found: list[Contradiction] = []
    for w in load_labels() if writes is None else writes:
        clause = CONFIRMATION_CLAUSES.get(w.domain)
        mine = by_write.get(w.id, [])
        if clause is None or not mine:
            continue
        confirmed = any(c.label == "confirmed" for c in mine)
        if w.label == "complies" and not confirmed:
            kind: Literal["complies_unconfirmed", "violates_confirmed"] = "complies_unconfirmed"
        elif w.label == "violates" and w.clauses == [clause] and confirmed:
            kind = "violates_confirmed"
        else:
            continue
        found.append(Contradiction(write_id=w.id, kind=kind, write_label=str(w.label),
                                   case_ids=sorted((c.id for c in mine), key=lambda i: int(i.rsplit(":", 1)[1]))))
    return sorted(found, key=lambda c: c.write_id)


def accepted(path: Path = ACCEPTED_FILE) -> list[AcceptedContradiction]:
    """The contradictions accepted on purpose (validated)."""
    return load_toml(path, AcceptedFile).accepted
