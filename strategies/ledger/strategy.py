"""`ledger`: LedgerAgent (Uddin et al., arXiv:2606.20529) as a tauguard strategy."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tauguard_strategies.domain_modules import missing_module
from tauguard_strategies.ledger.session import LedgerSession
from tauguard.errors import TauguardInputError
from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy

# The ledger's own rules of a domain: its clause book and one module each, found by name
# (domain_modules). All are required: the gate cites the clause book, without a schema there is
# no ledger, without a read map nothing fills it, without predicates it holds nothing.
RULE_PACKAGES = (
    "tauguard_strategies.ledger.schemas",
    "tauguard_strategies.ledger.readmap",
    "tauguard_strategies.ledger.predicates",
)


class LedgerRulesMissing(TauguardInputError):
    """The ledger strategy is used on a domain whose ledger rules (schema, read map, predicates) are missing."""


def check_rules(domain: str) -> None:
    """Raise :class:`LedgerRulesMissing` naming ``domain`` and every rule file it lacks."""
    from tauguard_strategies.ledger import clauses

    book = [] if domain in clauses.domains() else [f"strategies/ledger/clauses/{domain}.toml"]
    missing = book + [f for f in (missing_module(p, domain) for p in RULE_PACKAGES) if f is not None]
    if missing:
        raise LedgerRulesMissing(f"strategy ledger: domain '{domain}' has no ledger rules: missing {', '.join(missing)}")


class LedgerOptions(BaseModel):
    """Options of the ledger strategy (``--strategy-option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid")

    render: bool = Field(
        default=True,
        description="put the rendered ledger into an LLM agent's prompt; false keeps only the gate (an ablation)",
    )


class LedgerStrategy(Strategy):
    """LedgerAgent: typed ledger of read results + deterministic predicates gating writes (no LLM call)."""

    options_model = LedgerOptions
    session_class = LedgerSession
    options: LedgerOptions

    def check_domains(self, domains: list[str]) -> None:
        """Every domain of the run has the ledger's rule files (one line naming the missing ones)."""
        for domain in domains:
            check_rules(domain)

    def new_session(self, context: SessionContext) -> GuardSession:
        check_rules(context.domain)
        return LedgerSession(context.domain, context.tool_types, render_ledger=self.options.render)
