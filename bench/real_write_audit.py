"""Audit guards on every shared real τ² file against the labelled real-write benchmark, pooled.

    python bench/real_write_audit.py [--strategy ledger --strategy action-guard ...] [--runs DIR]
        [--shared DIR (default: the nearest shared/trajectories above the checkout)] [--no-follow-reads] [--catches] [--json out.json] [--workers 2]
        [--guard-llm MODEL [--api-base URL] [--no-key] | --loopback]

Imports each file of ``--shared`` into ``--runs`` (reused when already there), runs
``tauguard audit`` logic on each with every strategy (default options, compiled backends), and
prints, per domain and pooled, the false holds (passed / failed simulations), catches and the
false holds by cause, with Wilson 95 % intervals: first the default figures (a VERIFY whose
reads the agent does not perform is a hold), then, apart, the "after reads" figures (every
read a VERIFY names performed and the write gated again; ``--no-follow-reads`` skips them).
These are real agents' conversations; no simulation is involved.

With ``--guard-llm`` the strategies' LLM backends decide (key from the environment) and the
LLM calls, tokens and cost are printed per strategy, in total and per write. ``--loopback``
starts the tests' scripted loopback server (:mod:`tauguard.testing.llm_server`, answering with
:func:`tauguard.testing.guard_answers.permissive`) and points ``openai/loopback`` at it: its
figures are plumbing, not a measurement of any model, and the output says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = next((p / "shared" / "trajectories" for p in ROOT.parents if (p / "shared" / "trajectories").is_dir()), ROOT / "shared")
GUARDS = ["ledger", "action-guard", "workflow"]


def _import(path: Path, runs: Path) -> Path | None:
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    name = path.name.split(".json")[0]
    target = runs / name
    if (target / "manifest.json").exists():
        # A reused import must hold what this script would import, or the figures silently
        # depend on how the folder was made (an import without --accept-ambiguous drops labelled writes).
        counts = json.loads((target / "manifest.json").read_text()).get("counts", {})
        if counts.get("excluded_simulations", 0) > counts.get("different_task_version", 0):
            print(
                f"error: {target} was imported without some simulations the labels cover "
                f"({counts['excluded_simulations']} excluded, {counts.get('different_task_version', 0)} of them "
                "for another task version); remove it or give another --runs folder",
                file=sys.stderr,
            )
            raise SystemExit(2)
        return target
    domain = name.split("_")[0]
    try:
        results = read_results(path, domain=domain)
        # Every write in these files is labelled, the ones in simulations whose task placement is
        # ambiguous included (their label names the task it was read against): keep them, or the
        # denominators shrink with no one choosing it.
        import_results(results, runs, name=name, relabel=domain == "retail", accept_ambiguous=True)
    except Exception as exc:  # noqa: BLE001  a file the importer refuses is reported, not fatal
        print(f"skip {path.name}: {exc}")
        return None
    return target


def _after_reads(audits: list, label: str, rate_text) -> None:  # type: ignore[no-untyped-def]
    """The "after reads" figures, apart from the default ones (nothing when reads were not followed)."""
    shown = [a for a in audits if a.false_holds_after_reads is not None]
    if shown:
        print(f"-- {label}")
    for a in shown:
        print(f"{a.strategy:13s} false holds {rate_text(a.false_holds_after_reads)}; catches {rate_text(a.catches_after_reads)}")


def _unions(caught: dict[str, set[str]], violations: int, prefix: str) -> None:
    """The violations caught by each pair of guards together."""
    names = sorted(caught)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            print(f"{prefix}{first} ∪ {second}: {len(caught[first] | caught[second])}/{violations} violations caught")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strategy", action="append", default=None)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "real")
    parser.add_argument("--follow-reads", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--catches", action="store_true", help="also list the ids of each guard's caught violations")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--option", action="append", default=[], help="KEY=VALUE strategy option")
    parser.add_argument("--guard-llm", default=None, help="a litellm model for the strategies' LLM backends")
    parser.add_argument("--api-base", default=None, help="the --guard-llm model's OpenAI-compatible server")
    parser.add_argument("--no-key", action="store_true", help="the --api-base server needs no key")
    parser.add_argument("--loopback", action="store_true", help="the scripted loopback server answers (plumbing)")
    args = parser.parse_args()
    if args.loopback:
        from tauguard.testing.guard_answers import permissive
        from tauguard.testing.llm_server import ScriptedLLMServer

        with ScriptedLLMServer(permissive) as server:
            args.guard_llm, args.api_base, args.no_key = "openai/loopback", server.api_base, True
            audit(args)
        return
    audit(args)


def audit(args: argparse.Namespace) -> None:
    """Import, audit and print (see the module docstring)."""
    # with a guard model, the classifier's LLM gate too (its default artifact is not the question)
    strategies = args.strategy or (GUARDS + ["classifier"] if args.guard_llm else GUARDS)
    options = dict(o.split("=", 1) for o in args.option)

    from tauguard.benchmark.audit import pool, rate_text
    from tauguard.strategy_api.guard import GuardUsage
    from tauguard.trajectories.render import AFTER_READS_FIGURES, DEFAULT_FIGURES, PLUMBING
    from tauguard.runs.store import load_run
    from tauguard.trajectories.audit import GuardModel, audit_run

    guard = None
    if args.guard_llm:
        guard = GuardModel(args.guard_llm, {"api_base": args.api_base} if args.api_base else {}, args.no_key)
        print(f"guard LLM backends: {guard.model}{' at ' + args.api_base if args.api_base else ''}"
              + (f" -- {PLUMBING.upper()}" if args.loopback else ""))
    usage: dict[str, GuardUsage] = {}
    writes: dict[str, int] = {}
    scripted = 0

    args.runs.mkdir(parents=True, exist_ok=True)
    per_domain: dict[str, list] = {}
    started = time.perf_counter()
    files = [p for p in sorted(args.shared.glob("*.json.gz")) if "unlabelled" not in p.name]
    if not files:
        # An empty audit would print all-zero figures and exit 0, which reads as a result.
        print(f"error: --shared {args.shared} holds no τ² results files (*.json.gz); "
              "give the folder of the shared real trajectories", file=sys.stderr)
        raise SystemExit(2)
    sims = 0
    for path in files:
        run_dir = _import(path, args.runs)
        if run_dir is None:
            continue
        run = load_run(run_dir)
        report = audit_run(run, strategies, options, follow_reads=args.follow_reads, workers=args.workers, guard_llm=guard)
        sims += report.simulations
        scripted += report.scripted_answers
        for s in report.strategies:
            usage[s.strategy] = usage.get(s.strategy, GuardUsage()) + s.guard_usage
            writes[s.strategy] = writes.get(s.strategy, 0) + s.writes
            if s.labels is not None:
                per_domain.setdefault(report.domain, []).append(s.labels)
                print(f"{path.name:55s} {s.strategy:13s} false holds {rate_text(s.labels.false_holds):32s} "
                      f"catches {rate_text(s.labels.catches)}")
    out: dict[str, object] = {}
    for domain, audits in sorted(per_domain.items()):
        print(f"\n== {domain} (pooled over files); {DEFAULT_FIGURES}")
        for a in pool(audits):
            print(f"{a.strategy:13s} false holds {rate_text(a.false_holds)} (passed {rate_text(a.false_holds_passed)}; "
                  f"failed {rate_text(a.false_holds_failed)}); catches {rate_text(a.catches)}")
            print(f"{'':13s} by cause: {a.false_holds_by_rule}")
            out.setdefault(domain, {})[a.strategy] = a.model_dump(exclude={"decisions"})  # type: ignore[index]
        _after_reads(pool(audits), AFTER_READS_FIGURES, rate_text)
    everything = [a for audits in per_domain.values() for a in audits]
    caught = {a.strategy: set(a.caught) for a in pool(everything)}
    violations = {d.id for a in everything for d in a.decisions if d.label == "violates"}
    print(f"\n== all domains; {DEFAULT_FIGURES}")
    for a in pool(everything):
        print(f"{a.strategy:13s} false holds {rate_text(a.false_holds)}; catches {rate_text(a.catches)}")
        out.setdefault("all", {})[a.strategy] = {**a.model_dump(exclude={"decisions"}), "caught": a.caught, "missed": a.missed,  # type: ignore[index]
                                                 "caught_after_reads": a.caught_after_reads}
        if args.catches:
            print(f"{'':13s} caught: {', '.join(sorted(a.caught)) or '-'}")
    _unions(caught, len(violations), "")
    # The holds by cause (confirmation, read, predicate) and the catches by violated clause
    # (tauguard.trajectories.audit_axes), pooled over every file.
    from tauguard.benchmark.real_writes import load_labels
    from tauguard.trajectories.audit_axes import CAUSES, _breakdown

    clauses = {label.id: label.clauses for label in load_labels()}
    print(f"\n== all domains, holds by cause; {DEFAULT_FIGURES}")
    for a in pool(everything):
        b = _breakdown(a.strategy, a.decisions, clauses)
        print(f"{a.strategy:13s} false holds " + "; ".join(f"{c} {rate_text(b.false_holds_by_cause[c])}" for c in CAUSES))
        print(f"{'':13s} catches     " + "; ".join(f"{c} {rate_text(b.catches_by_cause[c])}" for c in CAUSES))
        print(f"{'':13s} catches by clause: " + "; ".join(f"{x.clause_id} {x.catches.held}/{x.catches.writes}" for x in b.catches_by_clause))
        out.setdefault("by_cause", {})[a.strategy] = b.model_dump()  # type: ignore[index]
    _after_reads(pool(everything), AFTER_READS_FIGURES, rate_text)
    if args.follow_reads:
        _unions({a.strategy: set(a.caught_after_reads) for a in pool(everything)}, len(violations), "after reads: ")
    if guard is not None:
        print(f"\n== guard LLM usage ({guard.model}{' at ' + args.api_base if args.api_base else ''})"
              + (f": {PLUMBING}" if scripted else ""))
        for name in strategies:
            u, n = usage.get(name, GuardUsage()), writes.get(name, 0)
            per = f"{u.llm_calls / n:.2f} calls, {(u.prompt_tokens + u.completion_tokens) / n:.0f} tokens, ${u.cost / n:.5f}" if n else "-"
            print(f"{name:13s} {u.llm_calls} calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
                  f"${u.cost:.4f}; per write ({n} writes): {per}")
            out.setdefault("usage", {})[name] = {**u.model_dump(), "writes": n}  # type: ignore[index]
        out["plumbing"] = bool(scripted)
    print(f"\n{sims} simulations audited by {len(strategies)} strategies in {time.perf_counter() - started:.1f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
