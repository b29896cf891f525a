"""Loading and validating the fault catalog and the policy-violation temptations."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tauguard.datafiles import load_toml
from tauguard.faults.model import FaultSpec, NoTemptation, Temptation

CATALOG_DIR = Path(__file__).parent / "catalog"
TEMPTATIONS_DIR = Path(__file__).parent / "temptations"


class _CatalogFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fault: list[FaultSpec]


class _TemptationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    domain: str
    temptation: list[Temptation] = []
    no_temptation: list[NoTemptation] = []


def load_catalog_file(path: Path) -> list[FaultSpec]:
    """Parse and validate one catalog file."""
    return load_toml(path, _CatalogFile).fault


@lru_cache(maxsize=1)
def load_catalog() -> tuple[FaultSpec, ...]:
    """Every fault of every catalog file, ids unique."""
    faults: list[FaultSpec] = []
    for path in sorted(CATALOG_DIR.glob("*.toml")):
        faults.extend(load_catalog_file(path))
    ids = [f.id for f in faults]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"duplicate fault ids in the catalog: {', '.join(dupes)}")
    return tuple(faults)


def faults_by_id() -> dict[str, FaultSpec]:
    """The catalog indexed by fault id."""
    return {f.id: f for f in load_catalog()}


def load_temptation_file(path: Path) -> tuple[str, list[Temptation]]:
    """Parse and validate one temptations file: (domain, temptations)."""
    parsed = _parse_temptation_file(path)
    return parsed.domain, parsed.temptation


def _parse_temptation_file(path: Path) -> _TemptationFile:
    parsed = load_toml(path, _TemptationFile)
    ids = [t.task_id for t in parsed.temptation] + [n.task_id for n in parsed.no_temptation]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"{path}: task ids listed more than once: {', '.join(dupes)}")
    return parsed


@lru_cache(maxsize=None)
def _domain_temptations(domain: str) -> _TemptationFile:
    path = TEMPTATIONS_DIR / f"{domain}.toml"
    if not path.exists():
        return _TemptationFile(domain=domain)
    parsed = _parse_temptation_file(path)
    if parsed.domain != domain:
        raise ValueError(f"{path} declares domain '{parsed.domain}', expected '{domain}'")
    return parsed


def temptations(domain: str) -> dict[str, Temptation]:
    """The domain's temptations by task id (empty when none are authored)."""
    return {t.task_id: t for t in _domain_temptations(domain).temptation}


def untempted(domain: str) -> dict[str, str]:
    """Policy-violation tasks with no forbidden agent write: task id -> why."""
    return {n.task_id: n.reason for n in _domain_temptations(domain).no_temptation}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# Why a fault cites no clause: a missed required action, or a loop τ² ends at its step limit.
NO_CLAUSE = {
    "premature_stop": "(none: a missed required action)",
    "repeat_loop": "(none: τ² cuts the run at its step limit)",
}


def markdown_table() -> str:
    """The catalog table of ``docs/faults.md`` (generated from the catalog files; a test keeps them in sync)."""
    rows = ["| id | class | kind | error type | tools | violates (clause ids) | the fault |", "|---|---|---|---|---|---|---|"]
    for spec in sorted(load_catalog(), key=lambda s: (s.domain == "*", s.id)):
        if spec.derive is not None:  # scope from the write contract: name the rule, not the derived lists
            what = "with target or prior reads" if spec.derive == "target_reads" else "that need an explicit yes"
            tools = f"the writes {what} (write contract)"
        else:
            tools = ", ".join(spec.tools) if spec.tools != ["*"] else "any"
            tools += "".join(f"; {d}: {', '.join(t)}" for d, t in sorted(spec.domain_tools.items()))
        cited = {d: ids for d, ids in spec.clauses.items() if ids}
        if spec.domain != "*":
            violates = ", ".join(f"`{i}`" for i in cited.get(spec.domain, []))
        else:
            violates = "; ".join(f"{d}: " + ", ".join(f"`{i}`" for i in ids) for d, ids in sorted(cited.items()))
        rows.append(
            f"| `{spec.id}` | {spec.fault_class} | {spec.kind} | {spec.error_type.replace('_', ' ')} | {tools} "
            f"| {violates or NO_CLAUSE.get(spec.kind, NO_CLAUSE['premature_stop'])} | {_cell(spec.description)} |"
        )
    return "\n".join(rows)
