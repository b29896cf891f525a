"""Gate probes: pre-action decision states labelled allow / verify / refuse.

A probe is a conversation prefix (replayed in tau2's real environment), a proposed WRITE
call and the decision a correct gate makes on it. Probes measure a strategy's gate alone,
without running conversations: `tauguard probes build` derives them from the gold plans and
the fault catalog, `tauguard probes eval` scores a strategy on them. `tauguard probes sweep`
gates every gold write of a split with any strategy (the no-false-block check).

- ``model``: the Probe schema and JSONL reading/writing;
- ``build``: probes from gold plans, faults and policy-violation temptations;
- ``evaluate``: gating each probe after replaying its prefix, and the scores;
- ``follow_reads``: gating again after the reads a VERIFY asks for (the one implementation);
- ``sweep`` / ``sweep_report``: the gold sweep (``sweep.sweep(strategy, domain, split,
  follow_reads=True) -> list[GoldDecision]``) and its report.
"""
