"""Whether a run's policy-violation slice holds any chance to violate (a question it can answer).

A policy-violation task (gold plan without an agent write) measures a guard only in trials where
the agent is drawn to make the forbidden write. A real agent always may; the sim agent only when
the run tempts it: a forbidden-write fault the profile injected (fault class ``PV``) or an
adversarial user (``run --attack``). A sim run with neither on the slice has no violation
opportunity: every strategy passes it, and comparing or gating strategies on it measures nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tauguard.runs.store import Run


@dataclass(frozen=True)
class Opportunities:
    """The policy-violation trials of a run (one domain or all) and how many could violate."""

    trials: int  # evaluated trials of policy-violation tasks
    simulated: bool  # every one of them was played by the sim (else a real agent could violate in any)
    tempted: int  # sim trials with a forbidden-write fault applied or an adversarial user
    failed: int = 0  # trials that failed anyway (for another reason than a violation)

    @property
    def none(self) -> bool:
        """True when the slice has trials and not one of them could show a violation."""
        return self.trials > 0 and self.simulated and self.tempted == 0


def violation_opportunities(run: Run, domain: str | None = None) -> Opportunities:
    """Count the trials of ``run``'s policy-violation tasks that could show a violation."""
    from tauguard.analysis.summary import iter_tallies

    trials = tempted = failed = 0
    simulated = True
    for unit, tally in iter_tallies(run):
        if not unit.policy_violation_task or unit.error or (domain is not None and unit.domain != domain):
            continue
        trials += 1
        simulated = simulated and unit.simulated
        if unit.attacked or any(f[0] == "PV" and f[1] for f in tally.faults):
            tempted += 1
        failed += not unit.success
    return Opportunities(trials=trials, simulated=simulated, tempted=tempted, failed=failed)


def no_violation_opportunity(runs: Sequence[Run], domain: str | None = None) -> tuple[str, bool] | None:
    """Why ``runs`` cannot be compared on violations on their policy-violation tasks (one line), and
    whether there is nothing at all to compare there (every trial of every run passed); None when
    at least one run holds a violation opportunity there (or a real agent played it)."""
    counts = [violation_opportunities(run, domain) for run in runs]
    if not counts or not all(c.none for c in counts):
        return None
    where = f"the policy-violation tasks of {domain}" if domain else "the policy-violation tasks"
    names = ", ".join(run.manifest.run_id for run in runs)
    trials = sum(c.trials for c in counts)
    failed = sum(c.failed for c in counts)
    nothing = failed == 0
    effect = ("so every strategy passes them and nothing about violations can be measured" if nothing else
              f"so the {failed} failed trial(s) there failed for other reasons: no difference below is about violations")
    return (f"no violation opportunity in {where}: none of the {trials} sim trials of {names} was tempted "
            f"(no forbidden-write fault injected, no adversarial user), {effect}; rerun with a fault profile whose "
            "forbidden_write reaches this domain's temptations (docs/faults.md) or with --attack TACTIC where the "
            "domain has attack targets, or use --subset all / mutation"), nothing
