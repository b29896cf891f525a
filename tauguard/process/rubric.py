"""The process rubric's data: a generic walk over each domain's write contract.

The rubric writes nothing of its own: what a compliant trace does around each write
(identification, target reads, the explicit yes, closed-set arguments) and telecom's device
fixes and verify-after-act come from ``tauguard/domains/<domain>/writes.toml``
(:mod:`tauguard.domains.contract`). The checks are in :mod:`tauguard.process.score`.
Imports neither tau2 nor litellm.
"""

from __future__ import annotations

from tauguard.domains import UnknownClauseError, constants
from tauguard.domains.contract import DomainContract, contract, contract_domains

DomainRubric = DomainContract


def domains() -> list[str]:
    """Domains with a rubric (a write contract)."""
    return contract_domains()


def load(domain: str) -> DomainContract:
    """The rubric of ``domain``: its write contract (KeyError for a domain without one)."""
    try:
        return contract(domain)
    except UnknownClauseError:
        raise KeyError(domain) from None


def closed_values(domain: str, constant: str) -> list[str]:
    """The allowed values of a closed-set argument (a constant of the policy pack), lower-cased."""
    return [str(v).strip().lower() for v in getattr(constants(domain), constant)]
