"""A strategy's per-domain modules, found by name: ``<package>.<domain>`` for each domain.

A strategy package that holds one module per domain (the ledger's schemas, read maps and
predicates; action-guard's extra checks) loads them with :func:`load_domain_modules`, so adding a
domain's module means adding the file, never editing an existing one. Whether a missing module
is acceptable is the strategy's decision: :func:`missing_module` names the file it would need.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from tauguard.domains import DOMAINS


def domain_module(package: str, domain: str) -> ModuleType | None:
    """The module ``<package>.<domain>``, or None when ``package`` has no module for ``domain``.

    Only a missing file reads as None; an error inside an existing module propagates (a broken
    rule file must fail loudly, not silently look like "no rules").
    """
    name = f"{package}.{domain}"
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def load_domain_modules(package: str) -> dict[str, ModuleType]:
    """Domain -> its module of ``package``, for each of :data:`tauguard.domains.DOMAINS` that has one.

    Imported in the order of ``DOMAINS`` (sorted), so registrations happen in a stable order.
    """
    found: dict[str, ModuleType] = {}
    for domain in DOMAINS:
        module = domain_module(package, domain)
        if module is not None:
            found[domain] = module
    return found


def module_file(package: str, domain: str) -> str:
    """The source file of ``<package>.<domain>`` as it sits in the checkout (``strategies/...``), for messages."""
    parts = package.split(".")
    if parts[0] == "tauguard_strategies":
        parts[0] = "strategies"  # setup.py installs the folder strategies/ under this name
    return "/".join([*parts, f"{domain}.py"])


def missing_module(package: str, domain: str) -> str | None:
    """The file ``domain`` lacks in ``package`` (``strategies/ledger/schemas/mock.py``), or None if it has one."""
    return None if importlib.util.find_spec(f"{package}.{domain}") is not None else module_file(package, domain)
