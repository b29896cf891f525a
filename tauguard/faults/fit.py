"""Fit a fault profile to imported real runs: each failed simulation's first deviation from the gold plan.

Fitting reads the gold of the *imported real* runs (allowed: it is how a deviation is found);
the sim's reaction to guards never does (tauguard.sim.reaction).

Attribution of a failed simulation, walking the task's gold agent WRITEs in order and matching
each to a real WRITE call that took effect (not rejected by the tool), in any order — tau2
scores the end state; fields the tool ignores are dropped before comparing. The first gold
write without an exact match decides:

- a gold write the agent never made (and no other write instead): ``premature_transfer`` when
  it called transfer_to_human_agents, else ``premature_stop``;
- the same tool with other arguments: the wrong-argument fault that changes those arguments
  (:data:`WRONG_ARGUMENTS`); other flights on the same routes and days ``airline.not_cheapest``
  (another route ``airline.change_route``); other passenger values, each of which an earlier
  tool result of the conversation returned, ``airline.stale_value``; else unattributed;
- the same call, but no earlier read shares an identifier with it: ``skip_read``;
- a booking paying with a combination the policy's payment limits forbid (two certificates,
  two credit cards, four gift cards): ``airline.payment_limits``; other passenger values, some
  of which neither an earlier tool result nor the user said: ``airline.invented_passenger``;
- another write instead, or an extra write besides the gold ones: unattributed, except an extra
  write on a policy-violation task (a forbidden write, rate ``forbidden_write``);
- no difference at all (e.g. missing information the agent should have said): unattributed;
- a run that τ² cut at its step or error limit (scored 0) whose last :data:`LOOP_MIN` calls are
  one call repeated, where the walk found no catalogued deviation before: ``repeat_loop``, at the
  gold write it repeats (a loop on another call, e.g. a hand-off, is counted but the sim cannot make it).

A rate is the count over its opportunities: the gold writes *at risk* (every gold write of a
passed simulation; in a failed one, the writes up to and including its first deviation: after
it nothing is observed) where the sim can make the fault (:mod:`tauguard.faults.opportunity`:
a generator applies, a read can be dropped), plus the write where it was seen if the sim could
not make it there (counted as not reproducible). ``forbidden_write``: the policy-violation
tasks with a catalogued temptation. The first deviations at one write compete, so the profile
says ``draw = "first_deviation"`` (one draw per write, each fault with exactly its rate).
Dialogue faults (skip_confirmation, bundle_confirmation) are not attributed: a write sequence
cannot show them, so they stay 0 and the profile says so.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tauguard.errors import TauguardInputError
from tauguard.faults.draw import CONFLICT_REFUSAL, UNEXPLAINED
from tauguard.faults.rates import PRIOR_STRENGTH, FittedRate, fitted_rate, realistic_prior
from tauguard.domains.gold_conflicts import conflict_at

UNATTRIBUTED = "unattributed"
# A deviation that breaks no policy rule: another flight between the same places, a compliant
# refund destination other than the one the user asked for (class "C": the user's choice not
# followed; no catalogued fault, the sim makes only the dearer-flight case, airline.not_cheapest).
WRONG_CHOICE = "wrong_choice"
# The user ended the conversation in reply to the agent's request for the go-ahead (declined a
# quote, or sent the stop token with its yes): not the agent's premature stop (class "E").
USER_ENDED = "user_ended"
# Failure labels that are not faults of the agent the sim could make: counted, never rated as faults.
NOT_FAULTS = (UNATTRIBUTED, WRONG_CHOICE, USER_ENDED)
# Argument faults judged on the alternative write's own facts (not on how it differs from gold):
# at a documented gold conflict they stay faults; any other difference there is the compliant alternative.
OWN_FACT_FAULTS = frozenset({"airline.cancel_ineligible", "airline.other_user_reservation", "airline.payment_limits", "airline.invented_passenger"})
NEVER_MADE = "never made"  # in the reason of an attribution whose gold write the agent did not make
PV = "forbidden_write"
TRANSFER_TOOL = "transfer_to_human_agents"
LOOP = "repeat_loop"
LOOP_MIN = 5  # identical calls ending a run cut at its limit that make a loop
CUT_RUNS = ("max_steps", "too_many_errors")  # termination reasons τ² scores 0 whatever the writes
# The policy's payment limits on a booking (airline.payment_limits): most methods per source.
PAYMENT_LIMITS = {"certificate": 1, "credit_card": 1, "gift_card": 3}
# (domain, write tool) -> [(argument names that differ, fault id)], first match wins.
WRONG_ARGUMENTS: dict[tuple[str, str], list[tuple[frozenset[str], str]]] = {
    ("airline", "update_reservation_flights"): [(frozenset({"payment_id"}), "airline.payment_not_in_profile")],
    ("airline", "send_certificate"): [(frozenset({"amount"}), "airline.certificate_amount")],
    ("airline", "update_reservation_baggages"): [(frozenset({"nonfree_baggages"}), "airline.baggage_nonfree")],
    ("retail", "return_delivered_order_items"): [(frozenset({"payment_method_id"}), "retail.refund_method")],
    ("retail", "exchange_delivered_order_items"): [(frozenset({"payment_method_id"}), "retail.refund_method")],
    ("retail", "cancel_pending_order"): [(frozenset({"reason"}), "retail.cancel_reason")],
}


class FitError(TauguardInputError):
    """A run that cannot be fitted (not imported, no records, several domains)."""


class Attribution(BaseModel):
    """Why one failed real simulation failed, as a fault id (or unattributed)."""

    run_id: str
    task_id: str
    trial: int
    fault_id: str
    fault_class: str
    write_index: int | None = None
    why: str
    # False when the sim cannot make this fault at that write (its generator does not apply there).
    reproducible: bool = True


class FitResult(BaseModel):
    """Per-fault counts and opportunities, and every failed simulation's attribution."""

    domain: str
    runs: list[str]
    simulations: int
    failures: int
    counts: dict[str, int] = Field(default_factory=dict)
    opportunities: dict[str, int] = Field(default_factory=dict)
    attributions: list[Attribution] = Field(default_factory=list)
    # fault id -> attributions at a write where the sim cannot make that fault
    not_reproducible: dict[str, int] = Field(default_factory=dict)

    @property
    def rates(self) -> dict[str, float]:
        """Count over opportunities, per fault id (forbidden_write included)."""
        return {f: (self.counts.get(f, 0) / n if n else 0.0) for f, n in self.opportunities.items()}

    def fitted(self, strength: float = PRIOR_STRENGTH) -> dict[str, FittedRate]:
        """Every rated field (faults, forbidden_write, conflict_refusal) with its interval and shrunk
        value (:mod:`tauguard.faults.rates`: beta prior at the realistic rate, pseudo-count ``strength``)."""
        out = {f: fitted_rate(self.counts.get(f, 0), n, realistic_prior(f), strength) for f, n in sorted(self.opportunities.items())}
        if self.simulations:
            out[UNEXPLAINED] = fitted_rate(self.unexplained, self.simulations, None, strength)
        return out

    @property
    def unexplained(self) -> int:
        """Failures no fault explains (unattributed, wrong choices, user-ended): the sim's
        ``unexplained_failure`` rate is their share of the simulations."""
        return sum(self.counts.get(f, 0) for f in NOT_FAULTS)

    def class_mix(self) -> dict[str, int]:
        """Failures per fault class (U = unattributed)."""
        return dict(Counter(a.fault_class for a in self.attributions))


def _calls(simulation: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for message in simulation.get("messages") or []:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            args = call.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    args = {}
            out.append((call.get("name") or "", args))
    return out


def _before_calls(simulation: dict[str, Any], role: str) -> list[str]:
    """For each call of :func:`_calls`, the text of every ``role`` message before it."""
    out: list[str] = []
    texts: list[str] = []
    for message in simulation.get("messages") or []:
        if message.get("role") == role:
            texts.append(str(message.get("content") or ""))
        elif message.get("role") == "assistant":
            out.extend("\n".join(texts) for _ in message.get("tool_calls") or [])
    return out


def _seen(simulation: dict[str, Any]) -> list[str]:
    """For each call of :func:`_calls`, the text of every tool result before it."""
    return _before_calls(simulation, "tool")


def _said(simulation: dict[str, Any]) -> list[str]:
    """For each call of :func:`_calls`, the text of every user message before it."""
    return _before_calls(simulation, "user")


def _changed_passenger_values(args: dict[str, Any], gold: dict[str, Any]) -> list[str] | None:
    """The passenger values ``args`` has where gold has others (None: not the same passenger list shape)."""
    mine, theirs = args.get("passengers"), gold.get("passengers")
    if not isinstance(mine, list) or not isinstance(theirs, list) or len(mine) != len(theirs):
        return None
    changed = [(a, b) for a, b in zip(mine, theirs) if a != b]
    if not changed or not all(isinstance(a, dict) and isinstance(b, dict) for a, b in changed):
        return None
    return [str(a.get(k)) for a, b in changed for k in ("first_name", "last_name", "dob") if a.get(k) != b.get(k)]


def _in(value: str, text: str) -> bool:
    return json.dumps(value) in text or value in text


def _invented(args: dict[str, Any], gold: dict[str, Any], seen: str, said: str) -> bool:
    """Other passengers than gold, with a value that no earlier tool result and no user message has."""
    values = _changed_passenger_values(args, gold)
    return bool(values) and any(not _in(v, seen) and not _in(v, said) for v in values or [])


def _over_limits(db: Any, user_id: Any, payments: Any) -> bool:
    """A booking's payment methods that break the policy's per-source limits (airline.payment_limits)."""
    user = db.users.get(user_id) if isinstance(user_id, str) else None
    if user is None or not isinstance(payments, list):
        return False
    sources = Counter(
        user.payment_methods[p["payment_id"]].source
        for p in payments
        if isinstance(p, dict) and p.get("payment_id") in user.payment_methods
    )
    return any(sources.get(src, 0) > most for src, most in PAYMENT_LIMITS.items())


def _loop(simulation: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The call a run cut at its limit repeated at its end (:data:`LOOP_MIN` times or more), if any."""
    if str(simulation.get("termination_reason") or "") not in CUT_RUNS:
        return None
    calls = _calls(simulation)
    if len(calls) < LOOP_MIN:
        return None
    last = calls[-1]
    if all(c[0] == last[0] and _canonical(c[1]) == _canonical(last[1]) for c in calls[-LOOP_MIN:]):
        return last
    return None


def _stale(args: dict[str, Any], gold: dict[str, Any], seen: str) -> bool:
    """Other passengers than gold, each differing value of which an earlier tool result returned."""
    values = _changed_passenger_values(args, gold)
    return bool(values) and all(_in(v, seen) for v in values or [])


def _projected(args: dict[str, Any], gold: dict[str, Any]) -> dict[str, Any]:
    """The real arguments with list entries cut to the gold entries' keys: an agent that adds
    fields the tool ignores (a flight's origin, a seat preference) has not deviated."""
    out = dict(args)
    for key, want in gold.items():
        have = out.get(key)
        if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
            if all(isinstance(w, dict) and isinstance(h, dict) and set(w) <= set(h) for w, h in zip(want, have)):
                out[key] = [{k: h[k] for k in w} for w, h in zip(want, have)]
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _journeys(legs: list[tuple[Any, Any, Any]]) -> list[tuple[Any, Any]]:
    """(origin, destination) of each journey of an itinerary's legs (origin, destination, date):
    connected legs (one departs where the previous one landed, within a day) make one journey."""
    from datetime import date, timedelta

    def day(text: Any) -> date | None:
        try:
            return date.fromisoformat(str(text))
        except ValueError:
            return None

    out: list[tuple[Any, Any]] = []
    previous: tuple[Any, Any, Any] | None = None
    for leg in legs:
        a, b = (day(previous[2]), day(leg[2])) if previous is not None else (None, None)
        connected = previous is not None and previous[1] == leg[0] and a is not None and b is not None and timedelta(0) <= b - a <= timedelta(days=1)
        if connected and out:
            out[-1] = (out[-1][0], leg[1])
        else:
            out.append((leg[0], leg[1]))
        previous = leg
    return out


def _flight_fault(db: Any, mine: Any, theirs: Any) -> str | None:
    """A changed itinerary: the same routes and days (a dearer or other choice: ``airline.not_cheapest``),
    other flights, connections or days between the same places (a wrong choice), or another route."""
    if not isinstance(mine, list) or not isinstance(theirs, list):
        return None

    def leg(seg: Any) -> tuple[Any, Any, Any] | None:
        flight = db.flights.get(seg.get("flight_number")) if isinstance(seg, dict) else None
        return None if flight is None else (flight.origin, flight.destination, seg.get("date"))

    a_legs, b_legs = [leg(x) for x in mine], [leg(x) for x in theirs]
    if any(x is None for x in a_legs + b_legs) or not a_legs:
        return None
    a_ok = [x for x in a_legs if x is not None]
    b_ok = [x for x in b_legs if x is not None]
    if a_ok == b_ok or (len(a_ok) == len(b_ok) and all(x == y for x, y in zip(a_ok, b_ok))):
        return "airline.not_cheapest"
    if _journeys(a_ok) == _journeys(b_ok):
        return WRONG_CHOICE
    return "airline.change_route"


def _rejected(simulation: dict[str, Any]) -> set[int]:
    """Indices (into :func:`_calls`) of the calls whose tool result is an error: they changed nothing."""
    failed = {m.get("id") for m in simulation.get("messages") or [] if m.get("role") == "tool" and m.get("error") in (True, "True", "true")}
    index, out = 0, set()
    for message in simulation.get("messages") or []:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            if call.get("id") in failed:
                out.add(index)
            index += 1
    return out


def _same_target(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return any(isinstance(v, str) and v and a.get(k) == v for k, v in b.items() if k.endswith("_id"))


def _compliant_refund(db: Any, args: dict[str, Any]) -> bool:
    """A retail refund to the order's original payment method or to a gift card (what the policy allows)."""
    method = args.get("payment_method_id")
    if not isinstance(method, str):
        return False
    if method.startswith("gift_card_"):
        return True
    order = db.orders.get(args.get("order_id")) if db is not None and isinstance(args.get("order_id"), str) else None
    history = getattr(order, "payment_history", None) or []
    return any(getattr(p, "transaction_type", "") == "payment" and getattr(p, "payment_method_id", None) == method for p in history)


def _argument_fault(
    domain: str, name: str, args: dict[str, Any], gold: dict[str, Any], db: Any, seen: str | None, said: str = ""
) -> tuple[str, str]:
    """The catalogued fault that turns the gold arguments into ``args`` (or unattributed), and why."""
    differ = frozenset(a for a in set(args) | set(gold) if _canonical(args.get(a)) != _canonical(gold.get(a)))
    if domain == "retail" and differ == {"payment_method_id"} and _compliant_refund(db, args):
        return WRONG_CHOICE, f"{name}: refund to {args.get('payment_method_id')}, the order's original method or a gift card (compliant; gold refunds elsewhere)"
    for keys, fid in WRONG_ARGUMENTS.get((domain, name), []):
        if differ <= keys:
            return fid, f"{name} differs from gold in {', '.join(sorted(differ))}"
    payment = "payment_methods" if name == "book_reservation" else "payment_id"
    if db is not None and name in ("update_reservation_flights", "book_reservation") and "flights" in differ and differ <= {"flights", payment}:
        chosen = _flight_fault(db, args.get("flights"), gold.get("flights"))
        if chosen is not None:
            what = {"airline.not_cheapest": "same routes and days", WRONG_CHOICE: "another flight, connection or day between the same places"}
            return chosen, f"{name}: other flights ({what.get(chosen, 'another route')})"
    if db is not None and name == "cancel_reservation" and differ == {"reservation_id"}:
        mine, theirs = db.reservations.get(args.get("reservation_id")), db.reservations.get(gold.get("reservation_id"))
        if mine is not None and theirs is not None:
            from tauguard.faults.domain.airline import _cancel_basis

            if mine.user_id != theirs.user_id:
                return "airline.other_user_reservation", f"{name}: another user's reservation"
            if not _cancel_basis(db, mine):
                return "airline.cancel_ineligible", f"{name}: another reservation of the user, without a cancellation ground"
    if domain == "airline" and differ == {"passengers"} and seen is not None and _stale(args, gold, seen):
        return "airline.stale_value", f"{name}: passenger values from an earlier read, not the gold ones"
    if domain == "airline" and differ == {"passengers"} and seen is not None and _invented(args, gold, seen, said):
        return "airline.invented_passenger", f"{name}: passenger values no tool result or user message gave"
    if db is not None and name == "book_reservation" and differ == {"payment_methods"} and _over_limits(db, args.get("user_id"), args.get("payment_methods")):
        return "airline.payment_limits", f"{name}: payment methods beyond the policy's per-source limits"
    return UNATTRIBUTED, f"{name} differs from gold in {', '.join(sorted(differ))} (no catalogued fault)"


def user_ended(simulation: dict[str, Any]) -> bool:
    """Whether the user ended the conversation in reply to the agent's request for the go-ahead
    (declining a quote, or the stop token sent with a yes): the last agent text before the user's
    closing message asks for the go-ahead (the neutral dialogue judge decides)."""
    from tauguard.dialogue import asks_go_ahead

    if str(simulation.get("termination_reason") or "") not in ("user_stop", "TerminationReason.USER_STOP"):
        return False
    messages = [m for m in simulation.get("messages") or [] if m.get("role") in ("user", "assistant")]
    if not messages or messages[-1].get("role") != "user" or "###STOP###" not in str(messages[-1].get("content") or ""):
        return False
    for message in reversed(messages[:-1]):
        if message.get("role") == "assistant":
            if message.get("tool_calls") and not message.get("content"):
                return False  # the agent acted last: the user closed after it
            return asks_go_ahead(str(message.get("content") or ""))
    return False


@lru_cache(maxsize=None)
def _conflict_tasks(domain: str) -> tuple[tuple[str, str], ...]:
    """(task id, its gold agent writes as canonical JSON) of the documented gold-conflict tasks."""
    from tauguard.domains.gold_conflicts import gold_conflicts
    from tauguard.tau2_adapter import compat as t2

    ids = {c.task_id for c in gold_conflicts() if c.domain == domain}
    if not ids:
        return ()
    return tuple(
        (t.id, _canonical([[a.name, dict(a.arguments)] for a in (t.evaluation_criteria.actions or []) if t2.is_agent_write(domain, a)]))
        for t in t2.load_tasks(domain, "base") if t.id in ids and t.evaluation_criteria
    )


def _conflict_at(domain: str, task_id: str | None, gold: list[Any], index: int) -> bool:
    """Whether gold write ``index`` is a documented gold conflict (the task found by its gold writes when no id is given)."""
    if task_id is None:
        key = _canonical([[g.name, dict(g.arguments)] for g in gold])
        task_id = next((t for t, writes in _conflict_tasks(domain) if writes == key), None)
    return task_id is not None and conflict_at(domain, task_id, index) is not None


def _attribute(
    domain: str, gold: list[Any], calls: list[tuple[str, dict[str, Any]]], writes: set[str], pv_task: bool, db: Any = None,
    seen: list[str] | None = None, rejected: set[int] | None = None, said: list[str] | None = None,
    task_id: str | None = None, ended_by_user: bool = False,
) -> tuple[str, int | None, str]:
    from tauguard.strategy_api.conversation import ToolCallView
    from tauguard.sim.plan import targets

    # The writes that took effect (a rejected call changed nothing), matched to the gold writes
    # as a set: tau2 scores the end state, so the order of independent writes is no deviation.
    real = [(i, n, a) for i, (n, a) in enumerate(calls) if n in writes and i not in (rejected or set())]
    def matches(j: int, h: Any) -> bool:
        return real[j][1] == h.name and _canonical(_projected(real[j][2], dict(h.arguments))) == _canonical(dict(h.arguments))

    used: set[int] = set()
    for k, g in enumerate(gold):
        want = dict(g.arguments)
        exact = next((j for j in range(len(real)) if j not in used and matches(j, g)), None)
        if exact is None:
            # a write matching no gold write: the same tool with other arguments (on the same
            # target when one exists), else another write instead
            # (a stray write on the target of a later unmatched gold write belongs to that one)
            later = [dict(h.arguments) | {"": h.name} for h in gold[k + 1 :]]
            stray = [j for j in range(len(real)) if j not in used and not any(matches(j, h) for h in gold)
                     and (real[j][1] == g.name or not any(h[""] == real[j][1] and _same_target(real[j][2], h) for h in later))]
            same = [j for j in stray if real[j][1] == g.name]
            other = next((j for j in same if _same_target(real[j][2], want)), same[0] if same else None)
            if other is not None:
                pos, name, args = real[other]
                fid, why = _argument_fault(
                    domain, name, _projected(args, want), want, db, seen[pos] if seen is not None else None,
                    said[pos] if said is not None else "",
                )
                if fid not in OWN_FACT_FAULTS and _conflict_at(domain, task_id, gold, k):
                    # The gold write contradicts the policy (gold_conflicts.toml): other arguments
                    # there are the compliant alternative, not a fault (τ² fails it all the same),
                    # unless the alternative breaks a rule on its own facts.
                    return CONFLICT_REFUSAL, k, f"gold write {k} ({g.name}): a compliant alternative with other arguments at a documented gold conflict"
                return fid, k, why
            extra = stray[0] if stray else None
            if extra is not None:
                return UNATTRIBUTED, k, f"gold write {k} ({g.name}) never made; the agent made {real[extra][1]} instead"
            if any(n == TRANSFER_TOOL for n, _ in calls):
                return "premature_transfer", k, f"gold write {k} ({g.name}) never made; the agent transferred to a human"
            if ended_by_user:
                return USER_ENDED, k, f"gold write {k} ({g.name}) never made; the user ended the conversation in reply to the agent's request for the go-ahead"
            return "premature_stop", k, f"gold write {k} ({g.name}) never made"
        used.add(exact)
        pos, name, args = real[exact]
        wanted = targets(ToolCallView(id="", name=name, arguments=args))
        earlier = [ToolCallView(id="", name=n, arguments=a) for n, a in calls[:pos] if n not in writes]
        if wanted and not any(targets(c) & wanted for c in earlier):
            return "skip_read", k, f"{name} without an earlier read of its target"
    left = [r for j, r in enumerate(real) if j not in used]
    if left:
        if pv_task:
            return PV, None, f"a write ({left[0][1]}) on a policy-violation task"
        return UNATTRIBUTED, len(gold), f"an extra write ({left[0][1]})"
    return UNATTRIBUTED, None, "the writes match the gold plan (e.g. information not communicated)"


def _gold_index(gold: list[Any], call: tuple[str, dict[str, Any]]) -> int | None:
    """The gold write a call makes (fields the tool ignores dropped), if any."""
    for k, g in enumerate(gold):
        want = dict(g.arguments)
        if call[0] == g.name and _canonical(_projected(call[1], want)) == _canonical(want):
            return k
    return None


def fit(run_dirs: list[Path], task_ids: set[str] | None = None) -> FitResult:
    """Attribute every failed simulation of the imported runs; count each fault's opportunities.
    ``task_ids``: fit on these tasks' simulations only (``faults validate`` fits on half the tasks)."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.faults.catalog import faults_by_id, temptations
    from tauguard.faults.opportunity import write_opportunities
    from tauguard.runs.store import load_run

    runs = [load_run(d) for d in run_dirs]
    for run in runs:
        if run.manifest.source != "imported":
            raise FitError(f"{run.path}: not an imported real run (tauguard import); fit reads real agents only")
    domains = {d for run in runs for d in run.manifest.domains}
    if len(domains) != 1:
        raise FitError(f"runs to fit must share one domain, got {', '.join(sorted(domains)) or 'none'}")
    domain = domains.pop()
    tasks = {t.id: t for t in t2.load_tasks(domain, "base")}
    agent_types, _ = t2.tool_types(domain)
    writes = {n for n, kind in agent_types.items() if kind == "WRITE"}
    catalog = faults_by_id()
    tempting = temptations(domain)
    result = FitResult(domain=domain, runs=[r.manifest.run_id for r in runs], simulations=0, failures=0)
    opportunities: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    sites: dict[str, list[set[str]]] = {}  # task id -> the faults the sim can make at each gold write
    for run in runs:
        for record in run.records:
            task = tasks.get(record.task_id)
            if task_ids is not None and record.task_id not in task_ids:
                continue
            if task is None or record.success is None or record.simulation is None:
                continue
            result.simulations += 1
            gold = [a for a in (task.evaluation_criteria.actions or []) if t2.is_agent_write(domain, a)]
            if task.id not in sites:
                sites[task.id] = write_opportunities(domain, task)
            pv_task = not gold
            if pv_task and record.task_id in tempting:
                opportunities[PV] += 1
            fid, index = "", None
            if not record.success:
                result.failures += 1
                db = t2.task_environment(domain, task).tools.db if domain in ("airline", "retail") else None
                fid, index, why = _attribute(domain, gold, _calls(record.simulation), writes, pv_task, db,
                                             _seen(record.simulation), _rejected(record.simulation), _said(record.simulation),
                                             task_id=task.id, ended_by_user=user_ended(record.simulation))
                looped = _loop(record.simulation) if fid == UNATTRIBUTED else None
                if looped is not None:
                    fid, index, why = LOOP, _gold_index(gold, looped), f"{looped[0]} repeated until the run's limit"
            # The writes at risk: all of a passed simulation's; a failed one's up to its first deviation.
            at_risk = len(gold) if index is None else min(index + 1, len(gold))
            for k in range(at_risk):
                opportunities.update(sites[task.id][k] if k < len(sites[task.id]) else set())
                opportunities[CONFLICT_REFUSAL] += conflict_at(domain, task.id, k) is not None
            if record.success:
                continue
            if index is not None and NEVER_MADE in why and conflict_at(domain, task.id, index) is not None:
                # The gold write contradicts the policy (tauguard/domains/gold_conflicts.toml): not making
                # it is what the policy asks, not a fault, though tau2 fails the task.
                fid, why = CONFLICT_REFUSAL, f"{why}: a documented gold conflict (the policy forbids this write)"
            reproducible = fid in (*NOT_FAULTS, PV, CONFLICT_REFUSAL) or index is None or index >= len(sites[task.id]) or fid in sites[task.id][index]
            if fid == LOOP and index is None:
                reproducible = False  # a loop on a call that is no gold write: the sim loops on writes only
            if not reproducible:
                opportunities[fid] += 1  # the real agent made it here; the sim cannot
                result.not_reproducible[fid] = result.not_reproducible.get(fid, 0) + 1
            fault_class = catalog[fid].fault_class if fid in catalog else {PV: "PV", CONFLICT_REFUSAL: "W", WRONG_CHOICE: "C", USER_ENDED: "E"}.get(fid, "U")
            counts[fid] += 1
            result.attributions.append(
                Attribution(run_id=run.manifest.run_id, task_id=record.task_id, trial=record.trial, fault_id=fid,
                            fault_class=fault_class, write_index=index, why=why, reproducible=reproducible)
            )
    result.counts = dict(counts)
    result.opportunities = {f: n for f, n in opportunities.items() if f in counts or f in (PV, CONFLICT_REFUSAL) and n}
    return result


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def profile_toml(result: FitResult, name: str, uptake: float, block_transfer: float, strength: float = PRIOR_STRENGTH) -> str:
    """A fault profile (tauguard.faults.model.FaultProfile) with the fitted rates, their counts and intervals."""
    fitted = result.fitted(strength)
    rates = {f: r.rate for f, r in fitted.items() if f not in (PV, *NOT_FAULTS, CONFLICT_REFUSAL, UNEXPLAINED)}
    description = f"Fitted to real {result.domain} agents ({', '.join(result.runs)}); a simulation parameter."

    def top(field: str) -> float:
        return fitted[field].rate if field in fitted else 0.0

    lines = [
        f"# Fault profile fitted by `tauguard faults fit` to {len(result.runs)} imported real run(s) of {result.domain}:",
        f"# {', '.join(result.runs)}. {result.simulations} simulations, {result.failures} failed;",
        f"# {result.counts.get(UNATTRIBUTED, 0)} failures unattributed (no catalogued fault explains them).",
        "# Rates: first deviations from the gold plan in failed simulations / the gold writes at risk",
        "# (up to a failed simulation's first deviation) where the sim can make the fault; one draw per write.",
        f"# Each rate is shrunk: (count + m * p0) / (opportunities + m), m = {strength:g}, p0 = the packaged",
        "# realistic profile's rate (where it sets none: Jeffreys' prior, (count + 1/2) / (opportunities + 1));",
        "# [fit.rates] keeps each count, opportunities, observed share and its 95 % Jeffreys interval.",
        "# unexplained_failure: the failures no fault explains (unattributed, wrong choices, user-ended) per",
        "# simulation; the sim fails that share of trials whatever the guard, so it is not capped at its ceiling.",
        "# uptake and block_transfer are ASSUMPTIONS (no real run measures a reaction to a guard).",
        f"name = {_toml_str(name)}",
        f"description = {_toml_str(description)}",
        f"uptake = {uptake}",
        f"block_transfer = {block_transfer}",
        f"forbidden_write = {top(PV):.4f}",
        f"conflict_refusal = {top(CONFLICT_REFUSAL):.4f}",
        f"unexplained_failure = {top(UNEXPLAINED):.4f}",
        'draw = "first_deviation"',
        "",
        "[rates]",
        *[f"{_toml_str(f)} = {r:.4f}" for f, r in rates.items()],
        "",
        "[sources]",
        f"uptake = {_toml_str('Assumption passed to tauguard faults fit --uptake.')}",
        f"block_transfer = {_toml_str('Assumption passed to tauguard faults fit --block-transfer.')}",
        f"forbidden_write = {_toml_str(_count_text(result, PV, fitted))}",
        f"conflict_refusal = {_toml_str(_count_text(result, CONFLICT_REFUSAL, fitted) + ' (documented gold-conflict writes not made or made compliantly otherwise: not a fault)')}",
        *[f"{_toml_str(f)} = {_toml_str(_count_text(result, f, fitted))}" for f in rates],
        f"unattributed = {_toml_str(_count_text(result, UNATTRIBUTED, fitted))}",
        f"unexplained_failure = {_toml_str(_unexplained_text(result, fitted))}",
        "",
        "[fit]",
        f"simulations = {result.simulations}",
        f"failures = {result.failures}",
        f"unattributed = {result.counts.get(UNATTRIBUTED, 0)}",
        f"wrong_choice = {result.counts.get(WRONG_CHOICE, 0)}",
        f"user_ended = {result.counts.get(USER_ENDED, 0)}",
        f"prior_strength = {strength}",
        "",
        "[fit.counts]",
        *[f"{_toml_str(f)} = {n}" for f, n in sorted(result.counts.items())],
        "",
        "[fit.opportunities]",
        *[f"{_toml_str(f)} = {n}" for f, n in sorted(result.opportunities.items())],
        "",
        "# attributions at a write where the sim cannot make the fault (its generator does not apply)",
        "[fit.not_reproducible]",
        *[f"{_toml_str(f)} = {n}" for f, n in sorted(result.not_reproducible.items())],
        "",
        "# per rated field: count, opportunities, observed share, its 95 % Jeffreys interval, prior p0 (-1: Jeffreys'), shrunk rate",
        "[fit.rates]",
        *[
            f"{_toml_str(f)} = {{ count = {r.count}, opportunities = {r.opportunities}, observed = {r.observed:.4f}, "
            f"low = {r.low:.4f}, high = {r.high:.4f}, prior = {(-1.0 if r.prior is None else r.prior):.4f}, rate = {r.rate:.4f} }}"
            for f, r in fitted.items()
        ],
        "",
    ]
    return "\n".join(lines)


def _unexplained_text(result: FitResult, fitted: dict[str, FittedRate]) -> str:
    r = fitted.get(UNEXPLAINED)
    if r is None:
        return "no simulations"
    parts = ", ".join(f"{f} {result.counts.get(f, 0)}" for f in NOT_FAULTS)
    return (f"fitted: {r.count} of {r.opportunities} simulations ({parts}) in {', '.join(result.runs)} "
            f"(observed {r.observed:.3f}, 95 % Jeffreys [{r.low:.3f}, {r.high:.3f}]; shrunk {r.rate:.4f}); "
            "the sim fails the trial without a write (it has no model of these failures)")


def _count_text(result: FitResult, fid: str, fitted: dict[str, FittedRate] | None = None) -> str:
    n = result.opportunities.get(fid)
    over = f" of {n} opportunities" if n else " failed simulations"
    rate = (fitted or {}).get(fid)
    extra = f" (observed {rate.observed:.3f}, 95 % Jeffreys [{rate.low:.3f}, {rate.high:.3f}]; shrunk {rate.rate:.4f})" if rate else ""
    return f"fitted: {result.counts.get(fid, 0)}{over} in {', '.join(result.runs)}{extra}"
