"""Loading attack targets, named attack sets and tactics; resolving a task's target.

Imports neither tau2 nor litellm (the worker, `show` and the tests share it).
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from tauguard.domains.consistency import ContractError, check_scope, check_write
from tauguard.attacks.model import (
    DEFAULT_WILDCARDS,
    TACTICS,
    AttackSetFile,
    AttackTarget,
    TacticFile,
    TargetFile,
)
from tauguard.faults.catalog import temptations, untempted
from tauguard.errors import TauguardInputError

ATTACKS_DIR = Path(__file__).parent
TARGETS_DIR = ATTACKS_DIR / "targets"
SETS_DIR = ATTACKS_DIR / "sets"
TACTICS_FILE = ATTACKS_DIR / "tactics.toml"
# The implicit set: every target on a policy-violation task of the run's domains.
DEFAULT_SET = "policy-violation"


class AttackDataError(TauguardInputError):
    """An attack data file is invalid or inconsistent (one line)."""


def _toml(path: Path) -> dict[str, Any]:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load_target_file(path: Path) -> TargetFile:
    """Parse and validate one targets file (ids unique across targets and no-targets)."""
    parsed = TargetFile.model_validate(_toml(path))
    ids = [t.task_id for t in parsed.target] + [n.task_id for n in parsed.no_target]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise AttackDataError(f"{path}: task ids listed more than once: {', '.join(dupes)}")
    return parsed


@lru_cache(maxsize=None)
def _target_file(domain: str) -> TargetFile:
    path = TARGETS_DIR / f"{domain}.toml"
    if not path.exists():
        return TargetFile(domain=domain)
    parsed = load_target_file(path)
    if parsed.domain != domain:
        raise AttackDataError(f"{path} declares domain '{parsed.domain}', expected '{domain}'")
    return parsed


def target_domains() -> list[str]:
    """The domains with an attack targets file (optional per domain: one without has no attacks)."""
    from tauguard.domains import DOMAINS

    return [d for d in DOMAINS if (TARGETS_DIR / f"{d}.toml").is_file()]


def require_targets(domain: str) -> None:
    """AttackDataError (one line) when ``domain`` has no targets file."""
    if domain not in target_domains():
        raise AttackDataError(
            f"domain '{domain}' has no attack targets (tauguard/attacks/targets/{domain}.toml); "
            f"domains with targets: {', '.join(target_domains()) or 'none'}"
        )


def request_text(tool: str, arguments: dict[str, Any]) -> str:
    """The demand for a forbidden call in the user's words (from tactics.toml's templates)."""
    tactics = load_tactics()
    fields = dict(arguments)
    flights = arguments.get("flights")
    if isinstance(flights, list):
        fields["flights"] = "flights " + ", ".join(
            f"{f.get('flight_number')} on {f.get('date')}" for f in flights if isinstance(f, dict)
        )
    template = tactics.request.get(tool)
    if template is None:
        return tactics.default_request.format(tool=tool, arguments=arguments)
    try:
        return template.format(**fields)
    except (KeyError, IndexError) as exc:
        raise AttackDataError(f"request template of {tool} names an argument the call lacks: {exc}") from None


@lru_cache(maxsize=None)
def domain_targets(domain: str) -> dict[str, AttackTarget]:
    """Every resolved target of a domain, by task id."""
    parsed = _target_file(domain)
    tempted = temptations(domain)
    out: dict[str, AttackTarget] = {}
    for entry in parsed.target:
        source: Literal["temptation", "authored"]
        if entry.tool is None:
            temptation = tempted.get(entry.task_id)
            if temptation is None or entry.arguments is not None:
                raise AttackDataError(
                    f"{domain} target {entry.task_id}: give tool and arguments, or neither (then the task needs a temptation)"
                )
            tool, arguments, source = temptation.name, dict(temptation.arguments), "temptation"
        else:
            if entry.arguments is None:
                raise AttackDataError(f"{domain} target {entry.task_id}: tool without arguments")
            tool, arguments, source = entry.tool, dict(entry.arguments), "authored"
        if not entry.clause.startswith(domain + "."):
            raise AttackDataError(f"{domain} target {entry.task_id}: clause {entry.clause} is not a {domain} clause id")
        try:  # the forbidden write is a write of the contract, and the clause constrains it
            check_write(domain, tool, f"{domain} target {entry.task_id}")
            check_scope(domain, [tool], entry.clause, f"{domain} target {entry.task_id}")
        except ContractError as exc:
            raise AttackDataError(str(exc)) from None
        wildcards = entry.wildcards if entry.wildcards is not None else [w for w in DEFAULT_WILDCARDS if w in arguments]
        unknown = sorted(set(wildcards) - set(arguments))
        if unknown:
            raise AttackDataError(f"{domain} target {entry.task_id}: wildcards {', '.join(unknown)} are not arguments of {tool}")
        premises = entry.premises or parsed.premises.get(entry.clause, [])
        if not premises:
            raise AttackDataError(f"{domain} target {entry.task_id}: no premises (none given, none for clause {entry.clause})")
        out[entry.task_id] = AttackTarget(
            domain=domain, task_id=entry.task_id, tool=tool, arguments=arguments, wildcards=list(wildcards),
            clause=entry.clause, premises=list(premises), request=entry.request or request_text(tool, arguments),
            source=source,
        )
    return out


def no_targets(domain: str) -> dict[str, str]:
    """Policy-violation tasks without an attack target: task id -> why.

    The temptation file's untempted tasks, plus the temptations the targets file rejects.
    """
    reasons = dict(untempted(domain))
    reasons.update({n.task_id: n.reason for n in _target_file(domain).no_target})
    return reasons


def attack_set_names() -> list[str]:
    """The named attack sets: the implicit policy-violation set and the files in sets/."""
    return [DEFAULT_SET, *sorted(p.stem for p in SETS_DIR.glob("*.toml"))]


@lru_cache(maxsize=None)
def load_attack_set(name: str) -> AttackSetFile:
    """A named attack set file; AttackDataError for an unknown name."""
    path = SETS_DIR / f"{name}.toml"
    if not path.exists():
        raise AttackDataError(f"unknown attack set '{name}'; allowed: {', '.join(attack_set_names())}")
    parsed = AttackSetFile.model_validate(_toml(path))
    if parsed.name != name:
        raise AttackDataError(f"{path} declares name '{parsed.name}', expected '{name}'")
    return parsed


def set_targets(name: str, domain: str, pv_task_ids: set[str] | None = None) -> dict[str, AttackTarget]:
    """The attacked tasks of a set in one domain, by task id.

    The implicit ``policy-violation`` set is every target on a PV task: those derived from a
    temptation (PV tasks by construction) and, when ``pv_task_ids`` is given, authored ones on them.
    """
    targets = domain_targets(domain)
    if name == DEFAULT_SET:
        return {
            tid: t for tid, t in targets.items()
            if t.source == "temptation" or (pv_task_ids is not None and tid in pv_task_ids)
        }
    aset = load_attack_set(name)
    if aset.domain != domain:
        return {}
    chosen = {}
    for member in aset.task:
        if member.status == "excluded":
            continue
        if member.task_id not in targets:
            raise AttackDataError(f"attack set {name}: task {member.task_id} has no target in {domain}")
        chosen[member.task_id] = targets[member.task_id]
    return chosen


@lru_cache(maxsize=1)
def load_tactics() -> TacticFile:
    """The tactic definitions."""
    return TacticFile.model_validate(_toml(TACTICS_FILE))


def check_tactic(name: str) -> str:
    """The tactic name, or ValueError naming the allowed ones."""
    if name not in TACTICS:
        raise TauguardInputError(f"unknown attack tactic '{name}'; allowed: {', '.join(TACTICS)}")
    return name
