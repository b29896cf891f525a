"""Exact comparison of two deterministic sim runs, outcome by outcome.

The built-in ``sim`` agent and user are deterministic given the seed: two sim runs that share the
seed, the tasks, the trials, the fault profile (and its uptake), the sim's feedback mode, the
attack, the split, τ²'s version, the step limit and the dialogue judge, and differ only in the
strategy (or its options), meet the same faults in the same conversations until the strategy acts.
Every (task, trial) whose outcome differs is then a change the strategy made, not sampling noise:
no interval is needed, and :func:`flip_table` lists every flip.

:func:`exact_pairing` says whether two runs qualify, and why (or why not), in one line.
Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

from tauguard.analysis.compare_model import Flip, FlipTable, RunRef
from tauguard.analysis.metrics import Subset, metric_def, parse_metric
from tauguard.analysis.pairing import pairing_differences
from tauguard.domains.gold_conflicts import conflict_tasks
from tauguard.runs.outcome_index import UnitOutcome
from tauguard.runs.store import Run

SIM_MODEL = "sim"
__all__ = ["Flip", "FlipTable", "exact_pairing", "flip_rows", "flip_summary", "flip_table"]


def exact_pairing(
    baseline: Run, candidate: Run, base_ref: RunRef, cand_ref: RunRef
) -> tuple[bool, str]:
    """Whether two runs may be compared outcome by outcome, and the reason in one line.

    They qualify when both are sim runs (agent and user model ``sim``, guard model none or ``sim``)
    that agree on every field pairing needs (:mod:`tauguard.analysis.pairing`), on trials, step
    limit and dialogue judge; only the strategy and its options may differ.
    """
    a, b = baseline.manifest, candidate.manifest
    for m in (a, b):
        for role, model in (("agent", m.agent_llm), ("user", m.user_llm)):
            if model != SIM_MODEL:
                return False, f"run {m.run_id}'s {role} model is {model}, not the deterministic sim"
        if m.guard_llm not in (None, SIM_MODEL):
            return False, f"run {m.run_id}'s guard model is {m.guard_llm}, not the deterministic sim"
        if m.source != "run":
            return False, f"run {m.run_id} is imported, not a sim run"
    diffs = [d.field for d in pairing_differences(a, b)]
    if a.trials != b.trials:
        diffs.append("trials")
    if a.max_steps != b.max_steps:
        diffs.append("max steps")
    if base_ref.process_judges != cand_ref.process_judges:
        diffs.append("dialogue judge")
    if diffs:
        return False, f"the sim runs differ in {', '.join(diffs)}, not only in the strategy"
    if (a.strategy, a.strategy_options) == (b.strategy, b.strategy_options):
        what = f"they do not differ at all (both {a.strategy}), so every outcome must match"
    else:
        change = f"strategy {a.strategy} vs {b.strategy}" if a.strategy != b.strategy else f"{a.strategy}'s options"
        what = f"they differ only in {change}, so every flipped (task, trial) is the strategy's doing"
    profile = (a.fault_profile or {}).get("name") or "none"
    judge = ", ".join(base_ref.process_judges) if base_ref.process_judges else "not recorded in either"
    return True, (
        f"both are deterministic sim runs (agent and user model sim) with seed {a.seed}, the same "
        f"tasks, {a.trials} trial(s), fault profile {profile} and judge ({judge}); {what}"
    )


def _outcome(kind: str, u: UnitOutcome) -> bool | None:
    """The unit's per-trial outcome for a metric kind; None when it is not known."""
    if u.error:
        return None
    if kind == "asr@":
        return u.attack_success if u.attacked else None
    if kind == "process_valid^":
        return None if u.process is None else (u.success and u.process[0])
    return u.success


_OUTCOME_LABEL = {
    "asr@": "attack succeeded",
    "process_valid^": "trial passed and was process-valid",
}


def _keep(u: UnitOutcome, subset: Subset, domain: str | None = None) -> bool:
    if domain is not None and u.domain != domain:
        return False
    if subset == "policy_violation":
        return u.policy_violation_task
    if subset == "mutation":
        return not u.policy_violation_task
    return True


def flip_table(
    baseline: Run, candidate: Run, *, metric: str = "pass^", subset: Subset = "all", domain: str | None = None
) -> FlipTable:
    """Compare the runs' per-trial outcomes for ``metric`` (a kind such as ``pass^`` or a name
    such as ``pass^4``: every k of a kind reads the same per-trial outcome) unit by unit."""
    try:
        mdef = metric_def(metric)
    except KeyError:
        found = parse_metric(metric, scalars=False).definition
        if found is None:
            raise ValueError(f"{metric} has no per-trial outcome to compare") from None
        mdef = found
    kind = mdef.kind
    a = {(u.domain, u.task_id, u.trial): u for u in baseline.unit_outcomes() if _keep(u, subset, domain)}
    b = {(u.domain, u.task_id, u.trial): u for u in candidate.unit_outcomes() if _keep(u, subset, domain)}
    flips: list[Flip] = []
    unchanged = not_compared = 0
    conflicts = conflict_tasks()
    for key in sorted(a.keys() | b.keys()):
        ua, ub = a.get(key), b.get(key)
        oa = _outcome(kind, ua) if ua is not None else None
        ob = _outcome(kind, ub) if ub is not None else None
        if oa is None or ob is None:
            # An unattacked unit has no ASR outcome in either run: not a unit of that metric.
            if not (kind == "asr@" and ua is not None and ub is not None and not ua.attacked and not ub.attacked):
                not_compared += 1
            continue
        if oa == ob:
            unchanged += 1
            continue
        better = ob if mdef.higher_is_better else oa
        flips.append(
            Flip(domain=key[0], task_id=key[1], trial=key[2], baseline=oa, candidate=ob,
                 change="improved" if better else "regressed", gold_conflict=(key[0], key[1]) in conflicts)
        )
    improved = sum(f.change == "improved" for f in flips)
    return FlipTable(
        metric=metric if metric != kind else f"{kind}k",
        outcome=_OUTCOME_LABEL.get(kind, "trial passed (reward 1)"),
        higher_is_better=mdef.higher_is_better,
        compared=unchanged + len(flips),
        improved=improved,
        regressed=len(flips) - improved,
        unchanged=unchanged,
        not_compared=not_compared,
        flips=flips,
    )


def flip_rows(table: FlipTable) -> list[dict[str, str]]:
    """One display row per flip, regressions first."""
    word = {True: "yes", False: "no"}
    ordered = sorted(table.flips, key=lambda f: (f.change != "regressed", f.domain, f.task_id, f.trial))
    return [
        {
            "change": f.change,
            "domain": f.domain,
            "task": f.task_id,
            "trial": str(f.trial),
            f"baseline: {table.outcome}": word[f.baseline],
            f"candidate: {table.outcome}": word[f.candidate],
            "gold conflict": word[f.gold_conflict],
        }
        for f in ordered
    ]


def flip_summary(table: FlipTable) -> str:
    """e.g. ``of 200 (task, trial) outcomes 'trial passed (reward 1)': 3 improved, 1 regressed, 196 unchanged``."""
    line = (
        f"exact comparison of {table.compared} (task, trial) outcomes '{table.outcome}': "
        f"{table.improved} improved, {table.regressed} regressed, {table.unchanged} unchanged"
    )
    if table.regressed_on_conflicts:
        line += f" ({table.regressed_on_conflicts} of the regressions on documented gold-conflict tasks)"
    if table.not_compared:
        line += f" ({table.not_compared} unit(s) not compared: infrastructure error, unknown outcome or in one run only)"
    return line
