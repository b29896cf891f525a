"""One list of domains, derived from the domain folders, and the sim's identity look-ups from the contract."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from tauguard.domains import DIR, DOMAINS, DomainName, PolicyConstants, constants_model

SHIPPED = ("airline", "retail", "telecom")


def test_every_module_reads_the_one_list_of_domain_folders() -> None:
    import tauguard.cli.attacks

    folders = sorted(p.parent.name for p in DIR.glob("*/writes.toml"))
    assert list(DOMAINS) == folders
    # a superset check, not a pinned list: a new domain's folder needs no edit here, but a shipped
    # domain cannot vanish silently
    assert set(SHIPPED) <= set(DOMAINS)
    assert tauguard.cli.attacks.DOMAINS is DOMAINS


def test_tau2compat_reads_it_too(tau2: object) -> None:
    from tauguard.tau2_adapter import compat as tau2compat

    assert tau2compat.DOMAINS is DOMAINS


def test_a_domain_field_accepts_the_folders_and_names_them_when_it_refuses() -> None:
    class Row(BaseModel):
        domain: DomainName

    assert Row(domain="telecom").domain == "telecom"
    with pytest.raises(ValidationError, match=f"unknown domain 'bank'; allowed: {', '.join(DOMAINS)}"):
        Row(domain="bank")


def test_a_domain_without_a_typed_constants_model_reads_its_pack_as_attributes() -> None:
    assert constants_model("bank") is PolicyConstants
    consts = PolicyConstants.model_validate({"max_transfer": 500, "reasons": ["fraud"]})
    assert consts.max_transfer == 500 and consts.reasons == ["fraud"]  # type: ignore[attr-defined]


def test_the_identity_argument_comes_from_the_contract() -> None:
    from tauguard.domains.contract import contract
    from tauguard.sim.clean_plan import identity_argument

    # in every domain's contract it is an id argument of [entities]: the owner field an entity
    # names, or the argument of an entity an identifying read observes; none when no id names the
    # user (τ²'s mock: its identifying read takes no argument, tests/test_new_domain.py)
    for domain in DOMAINS:
        c = contract(domain)
        arg = identity_argument(c)
        owners = {e.owner for e in c.entities.values() if e.owner}
        observed = {a for a, e in c.entities.items() if e.read in c.identification.reads}
        if arg is None:
            assert not owners and not observed, domain
        else:
            assert arg in c.entities and (arg in owners or arg in observed), domain
    # the shipped domains' values, pinned (the sim's identification of their users must not move)
    assert {d: identity_argument(contract(d)) for d in SHIPPED} == {
        "airline": "user_id", "retail": "user_id", "telecom": "customer_id",
    }


def test_the_sims_identification_reads_come_from_the_contract(tau2: object) -> None:
    from tauguard.tau2_adapter import compat as t2
    from tauguard.strategy_api.conversation import ToolCallView
    from tauguard.sim.clean_plan import _identify, _owner

    task = next(t for t in t2.load_tasks("retail", "base") if t.id == "0")
    tools = t2.task_environment("retail", task).tools
    order = next(iter(tools.db.orders.values()))
    owner = _owner("retail", tools, ToolCallView(name="cancel_pending_order", arguments={"order_id": order.order_id}))
    assert owner == order.user_id
    ident = _identify("retail", tools, owner)
    assert ident is not None and ident.name == "find_user_id_by_email"
    assert ident.arguments == {"email": tools.db.users[owner].email}
    assert _identify("retail", tools, "nobody_1234") is None  # an unknown user: no read to make
    write = ToolCallView(name="send_certificate", arguments={"user_id": "mia_li_3668", "amount": 50})
    airline = t2.task_environment("airline", next(iter(t2.load_tasks("airline", "base")))).tools
    assert _owner("airline", airline, write) == "mia_li_3668"  # no target entity: the write's own user_id
