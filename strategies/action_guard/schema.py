"""Per-tool checklists: the data the action guard verifies before each WRITE call.

One TOML file per agent WRITE tool per domain under ``checklists/<domain>/<tool>.toml``.
Each item is one policy requirement, classified as PolicyGuard does (Kang et al., 2026, as
described in PolicyGuide, /work/shared/papers/workflow-guide_policyguide.md, Appendix):

- ``A`` argument-level: decidable from the call's arguments alone;
- ``T`` needs a prior tool result (a read of the target entity, a status, a membership);
- ``D`` needs the dialogue (explicit confirmation, a stated reason, a request).

``clauses`` cites the policy clauses the item comes from, by id (their verbatim texts live in
:mod:`tauguard.domains`; an unknown id is a load error); ``requirement`` and ``remediation``
may name the domain's policy constants as ``{c.<name>}`` (``str.format``); ``check``
optionally names a deterministic check (see :mod:`tauguard_strategies.action_guard.checks`). Items
without a check are judged only by the LLM verifier.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tauguard import domains as policy_pack
from tauguard.datafiles import read_toml, validate
from tauguard.domains.consistency import check_confirmation, check_entity_read, check_scope, check_write
from tauguard.domains.contract import contract
from tauguard.strategy_api.guard import Verdict

CHECKLIST_DIR = Path(__file__).parent / "checklists"

ItemKind = Literal["A", "T", "D"]
# The deterministic checks whose items restate the write contract (checked against it on load).
CONFIRMATION_CHECK = "dialogue.explicit_confirmation"
ENTITY_READ_CHECK = "tool.entity_read"


class StatementSpec(BaseModel):
    """How an agent message that states this action is recognised (for D-items).

    A message states the action when it mentions the tool name or one of ``words``
    (case-insensitive prefixes, e.g. ``cancel`` matches "cancellation") and every value
    found under ``key_args`` (argument paths such as ``order_id`` or ``flights.*.flight_number``).
    """

    model_config = ConfigDict(extra="forbid")

    words: list[str] = Field(default_factory=list)
    key_args: list[str] = Field(default_factory=list)


class ChecklistItem(BaseModel):
    """One policy requirement a proposed call must meet."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: ItemKind
    requirement: str
    clauses: list[str] = Field(min_length=1)  # ids of the policy clauses it comes from
    check: str | None = None  # id of a deterministic check; None = LLM verifier only
    params: dict[str, Any] = Field(default_factory=dict)
    # The verdict when the evidence contradicts the item. Missing evidence always maps to
    # VERIFY (read or ask first); D-items never do more than VERIFY.
    on_violation: Verdict = Verdict.VERIFY
    remediation: str = ""

    @field_validator("clauses", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("clauses")
    @classmethod
    def _clauses_resolve(cls, value: list[str]) -> list[str]:
        policy_pack.texts(value)  # UnknownClauseError (a ValueError) on an id no pack defines
        return value

    @property
    def policy(self) -> list[str]:
        """The verbatim policy sentences of the cited clauses, in order."""
        return policy_pack.texts(self.clauses)

    @model_validator(mode="after")
    def _severity_fits_kind(self) -> ChecklistItem:
        if self.on_violation == Verdict.ALLOW:
            raise ValueError(f"{self.id}: on_violation cannot be ALLOW")
        if self.kind == "A" and self.on_violation not in (Verdict.REVISE, Verdict.BLOCK):
            raise ValueError(f"{self.id}: an A item must declare on_violation REVISE or BLOCK")
        if self.kind == "D" and self.on_violation != Verdict.VERIFY:
            raise ValueError(f"{self.id}: a D item can only VERIFY (ask the user)")
        return self


class Checklist(BaseModel):
    """The checklist of one WRITE tool of one domain."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    tool: str
    description: str = ""
    items: list[ChecklistItem] = Field(default_factory=list)

    @property
    def statement(self) -> StatementSpec:
        """How a statement of this action is recognised: the write contract's confirmation
        (its words and the arguments it must convey), empty for a write that needs no yes."""
        rule = contract(self.domain).rule(self.tool)
        if rule is None or rule.confirmation is None:
            return StatementSpec()
        return StatementSpec(words=list(rule.confirmation.words), key_args=list(rule.confirmation.conveys))

    @model_validator(mode="before")
    @classmethod
    def _fill_constants(cls, data: Any) -> Any:
        """``requirement`` and ``remediation`` may name the domain's policy constants as ``{c.<name>}``."""
        if not isinstance(data, dict) or data.get("domain") not in policy_pack.domains():
            return data
        consts = policy_pack.constants(data["domain"])
        items = [
            {k: v.format(c=consts) if k in ("requirement", "remediation") and isinstance(v, str) else v for k, v in item.items()}
            if isinstance(item, dict) else item
            for item in data.get("items", [])
        ]
        return {**data, "items": items}

    @model_validator(mode="after")
    def _ids_unique_and_scoped(self) -> Checklist:
        prefix = f"{self.domain}.{self.tool}."
        seen: set[str] = set()
        for item in self.items:
            if not item.id.startswith(prefix):
                raise ValueError(f"item id '{item.id}' must start with '{prefix}'")
            if item.id in seen:
                raise ValueError(f"duplicate item id '{item.id}'")
            foreign = [c for c in item.clauses if not c.startswith(self.domain + ".")]
            if foreign:
                raise ValueError(f"{item.id}: clauses of another domain: {', '.join(foreign)}")
            seen.add(item.id)
        self._check_against_contract()
        return self

    def _check_against_contract(self) -> None:
        """The tool is a write of the contract; items agree with it and cite clauses in scope."""
        where = f"checklist {self.domain}/{self.tool}"
        check_write(self.domain, self.tool, where)
        confirmations = [i for i in self.items if i.check == CONFIRMATION_CHECK]
        check_confirmation(
            self.domain, self.tool, bool(confirmations), [c for i in confirmations for c in i.clauses], where
        )
        for item in self.items:
            for cid in item.clauses:
                check_scope(self.domain, [self.tool], cid, f"{where} item {item.id}")
            if item.check == ENTITY_READ_CHECK:
                check_entity_read(self.domain, str(item.params.get("arg")), str(item.params.get("read")), f"{where} item {item.id}")

    def item(self, item_id: str) -> ChecklistItem | None:
        """The item with ``item_id``, if any."""
        return next((i for i in self.items if i.id == item_id), None)


def load_checklist(path: Path) -> Checklist:
    """Parse and validate one checklist file; its folder and file name must match it."""
    raw = read_toml(path)  # the name check first: the contract checks depend on the declared tool
    if raw.get("domain") != path.parent.name or raw.get("tool") != path.stem:
        raise ValueError(f"{path}: declares {raw.get('domain')}/{raw.get('tool')}, file says {path.parent.name}/{path.stem}")
    return validate(raw, Checklist, str(path))


def checklist_files(domain: str | None = None) -> list[Path]:
    """All checklist files (of one domain, or of all)."""
    pattern = f"{domain}/*.toml" if domain else "*/*.toml"
    return sorted(CHECKLIST_DIR.glob(pattern))


@cache
def domain_checklists(domain: str) -> dict[str, Checklist]:
    """The checklists of ``domain`` by tool name (cached; files are read once per process)."""
    return {c.tool: c for c in (load_checklist(p) for p in checklist_files(domain))}
