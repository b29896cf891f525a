"""Clause coverage: for every policy clause that constrains a write, what each guard checks.

``rows()`` builds the table from the guards' own data (ledger predicates, action-guard
checklists, workflow graphs) and ``not_observable.toml``; ``render`` prints it; the docs page
``docs/clause_coverage.md`` is generated from it (``tauguard coverage --format markdown``).
"""

from tauguard.coverage.collect import RULE, rows, stale_entries
from tauguard.coverage.model import GUARDS, Cell, NotObservable, Row, not_observable

__all__ = ["GUARDS", "RULE", "Cell", "NotObservable", "Row", "not_observable", "rows", "stale_entries"]
