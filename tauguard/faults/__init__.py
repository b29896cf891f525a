"""Seeded fault injection for the sim agent.

A *fault* is a mistake the sim agent makes on purpose, tied to the policy clause it breaks.
Faults are drawn per (task, trial) from the run seed, independently of the strategy, so two
strategies run with the same seed meet identical faults (a paired design).

- ``model``: catalog entries, profiles and scheduled faults (pydantic schemas);
- ``catalog``: loads and validates the catalog data files in ``faults/catalog/``;
- ``generators``: the registry of functions that turn a gold write into a faulty call;
- ``draw``: draws a trial's faults and applies plan-level faults to the sim's plan.
"""
