"""Counterfactual guard audit: what a strategy's gate would have decided on recorded writes.

Each recorded conversation is replayed in τ²'s environment
(:func:`tauguard.trajectories.replayer.replay_recorded`); before every agent WRITE a fresh
guard session per strategy, fed with exactly the recorded prefix the way the live guard
wrapper feeds it (user turns, tool results, on the agent-visible conversation), is asked
``before_write``. The recorded write is then executed as recorded, whatever the gate said:
each decision is counterfactual for that write alone.

Writes are classed by the recorded outcome. A write is *gold-matching* when its name and
arguments equal one of the task's gold agent actions, *off-gold* otherwise; the simulation
passed when τ²'s recorded reward is 1. The hold rate (VERIFY, REVISE or BLOCK) on
gold-matching writes in passed simulations is a false-block proxy; on off-gold writes in
failed simulations a catch proxy; a failed simulation whose first off-gold write is held is
one the guard could have rescued. A decision that is the guard failing (rule id
``guard.error*``: an exception, a malformed verifier answer) is no hold: it is counted apart
(``guard_errors``) and left out of the hold rates' denominators.

With ``guard_llm`` the LLM backends decide (the action-guard and workflow verifiers, the
classifier's LLM gate, the LLM dialogue judge). Every call a strategy's hooks make is booked
to it (:func:`tauguard.usage_ledger.metered`): the calls, tokens and cost of each write's
decision, and the strategy's total including the workflow verifier's user-turn firings.
Answers from the scripted loopback server are counted (``scripted_answers``): such verdicts
are plumbing, not a measurement of any model.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, computed_field

from tauguard.runs.left_out import LeftOut, left_out_of
from tauguard.benchmark.audit import LabelAudit, index_labels, label_audit
from tauguard.benchmark.real_writes import LabelledWrite, load_labels
from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GUARD_ERROR_RULE, GuardDecision, GuardSession, GuardUsage, Verdict
from tauguard.usage_ledger import guard_usage, metered
from tauguard.runs.records import TrialRecord
from tauguard.secrets import mask_userinfo
from tauguard.strategy_api.registry import create_strategy
from tauguard.tau2_adapter.replay import feed_session, fresh_environment, session_context
from tauguard.runs.store import Run
from tauguard.trajectories.importer import run_tasks
from tauguard.trajectories.replayer import Mismatch, replay_recorded

WriteClass = Literal["gold_passed", "gold_failed", "off_gold_failed", "off_gold_passed"]
WRITE_CLASSES: tuple[WriteClass, ...] = ("gold_passed", "gold_failed", "off_gold_failed", "off_gold_passed")
HOLDS = ("VERIFY", "REVISE", "BLOCK")
OVER_BLOCKING = 0.05  # hold rate on gold-matching writes in passed simulations above which a guard over-blocks
T = TypeVar("T")


def write_class(gold_match: bool, passed: bool) -> WriteClass:
    """The outcome class of a write."""
    if gold_match:
        return "gold_passed" if passed else "gold_failed"
    return "off_gold_passed" if passed else "off_gold_failed"


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """Arguments as canonical JSON, for equality with gold actions."""
    return json.dumps(arguments, sort_keys=True, default=str)


def gold_writes(domain: str, task: t2.Task) -> set[tuple[str, str]]:
    """(name, canonical arguments) of the task's gold agent WRITE actions."""
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    return {(a.name, canonical_arguments(a.arguments)) for a in actions if t2.is_agent_write(domain, a)}


class AuditedWrite(BaseModel):
    """One recorded write and one strategy's decision on it."""

    task_id: str
    trial: int
    step: int  # index of the agent message in the recorded message list
    call_id: str = ""  # the recorded tool call's id (joins the labelled real-write benchmark)
    tool: str
    arguments: dict[str, Any]
    write_class: WriteClass
    first_off_gold: bool = False  # the simulation's first off-gold write
    recorded_error: bool = False  # the recorded call returned an error
    verdict: str
    rule_id: str | None = None
    reason: str = ""
    verdict_after_reads: str | None = None  # --follow-reads: after performing a VERIFY's reads
    usage: GuardUsage = Field(default_factory=GuardUsage)  # the LLM calls made deciding on this write

    @property
    def guard_error(self) -> bool:
        """The decision is the guard failing (rule id ``guard.error*``), not a judgement."""
        return bool(self.rule_id) and str(self.rule_id).startswith(GUARD_ERROR_RULE)

    @property
    def held(self) -> bool:
        """The gate decided not to allow the write (a guard error is no decision)."""
        return self.verdict != Verdict.ALLOW.value and not self.guard_error

    @property
    def held_after_reads(self) -> bool:
        """Still held after the reads a VERIFY asked for (the first verdict without --follow-reads)."""
        return (self.verdict_after_reads or self.verdict) != Verdict.ALLOW.value and not self.guard_error


class ClassStats(BaseModel):
    """Writes of one outcome class and how one strategy decided on them."""

    writes: int = 0
    held: int = 0
    guard_errors: int = 0  # decisions that are the guard failing: neither held nor allowed
    verdicts: dict[str, int] = Field(default_factory=dict)
    hold_rate: float | None = None  # held / (writes - guard_errors)
    held_after_reads: int | None = None
    hold_rate_after_reads: float | None = None


class UsagePerWrite(BaseModel):
    """A strategy's LLM usage divided by the writes it gated (user-turn calls included)."""

    llm_calls: float
    prompt_tokens: float
    completion_tokens: float
    cost: float

    @classmethod
    def of(cls, usage: GuardUsage, writes: int) -> "UsagePerWrite | None":
        """``usage`` / ``writes``; None for no writes."""
        if not writes:
            return None
        return cls(llm_calls=usage.llm_calls / writes, prompt_tokens=usage.prompt_tokens / writes,
                   completion_tokens=usage.completion_tokens / writes, cost=usage.cost / writes)


class StrategyAudit(BaseModel):
    """One strategy's decisions on every recorded write."""

    strategy: str
    options: dict[str, Any] = Field(default_factory=dict)
    writes: int = 0
    by_class: dict[str, ClassStats] = Field(default_factory=dict)
    false_block_proxy: float | None = None  # hold rate, gold-matching writes in passed simulations
    catch_proxy: float | None = None  # hold rate, off-gold writes in failed simulations
    failed_with_off_gold: int = 0  # failed simulations with at least one off-gold write
    rescued: int = 0  # of which the first off-gold write is held
    rescue_potential: float | None = None
    # Holds more than 5 % of complying writes: by the labels when the run has labelled complying
    # writes (the measure), else by the false-block proxy (gold-matching writes in passed simulations).
    over_blocking: bool = False
    over_blocking_basis: Literal["labels", "proxy"] = "proxy"
    per_rule: dict[str, dict[str, int]] = Field(default_factory=dict)  # rule id -> write class -> holds
    guard_usage: GuardUsage = Field(default_factory=GuardUsage)  # every LLM call of the strategy's hooks
    guard_usage_per_write: UsagePerWrite | None = None  # guard_usage / writes (None without writes)
    guard_errors: int = 0  # decisions that are the guard failing (rule id guard.error*)
    seconds: float = 0.0  # time spent in this strategy's hooks
    held_writes: list[AuditedWrite] = Field(default_factory=list)
    # Against the labelled real-write benchmark (tauguard.benchmark), when the run holds labelled writes.
    labels: LabelAudit | None = None


class ReplayStats(BaseModel):
    """How faithfully the recorded conversations replayed."""

    simulations: int = 0
    tool_calls: int = 0
    mismatches: int = 0  # replayed results differing from the recorded ones (benign included)
    benign: int = 0  # of which only pydantic's error-URL version differs
    unfaithful_simulations: int = 0  # simulations with a non-benign mismatch
    details: list[dict[str, Any]] = Field(default_factory=list)  # every mismatch, with task and trial


class AuditReport(BaseModel):
    """The audit of one run by one or more strategies."""

    run_id: str
    source: str
    simulated: bool
    domain: str
    agent_llm: str
    user_llm: str
    simulations: int
    passed: int
    failed: int
    writes: int
    class_counts: dict[str, int]
    follow_reads: bool
    replay: ReplayStats
    strategies: list[StrategyAudit]
    seconds: float = 0.0
    guard_llm: str | None = None  # the model the LLM backends asked (--guard-llm)
    labels_checked: bool = True  # False with --no-labels: no benchmark was asked
    guard_api_base: str | None = None  # its server (--api-base), userinfo masked
    scripted_answers: int = 0  # answers from the scripted loopback server: plumbing, not a model's
    left_out: LeftOut | None = None  # an imported run: the file's simulations the import left out

    @computed_field  # type: ignore[prop-decorator]
    @property
    def plumbing(self) -> bool:
        """The guard verdicts came (partly) from the scripted loopback server."""
        return self.scripted_answers > 0


class _Gate:
    """One strategy's session on one replayed conversation, fed as the live wrapper feeds it."""

    def __init__(self, name: str, strategy: Any, context: Any, env: t2.Environment, domain: str,
                 tool_types: dict[str, str], follow_reads: bool,
                 on_write: Callable[[str, int, ToolCallView, GuardDecision, str | None, GuardUsage], None]) -> None:
        self.name = name
        self.strategy = strategy
        self.context = context
        self.session: GuardSession | None = strategy.new_session(context)
        self.seen = Conversation()  # the agent-visible conversation
        self.env = env
        self.domain = domain
        self.tool_types = tool_types
        self.follow_reads = follow_reads
        self.on_write = on_write
        self.seconds = 0.0
        self.usage = GuardUsage()  # every LLM call of this strategy's hooks
        self.scripted = 0

    def _metered(self, hook: Callable[[], T]) -> tuple[T, GuardUsage]:
        """Run one hook, booking the LLM calls it makes to this strategy; returns them too."""
        with metered() as ledger:
            out = hook()
        used = guard_usage(ledger)
        self.usage = self.usage + used
        self.scripted += ledger.scripted
        return out, used

    def on_event(self, event: ConversationEvent, conversation: Conversation) -> None:
        if event.requestor == "user":
            return  # user-side device calls and their results are not the agent's to see
        self.seen.add(event)
        if self.session is None:
            return
        session = self.session
        start = time.perf_counter()
        if event.kind == "tool_result":
            self._metered(lambda: session.after_tool(event, self.seen))
        elif event.kind == "user_message":
            self._metered(lambda: session.on_user_turn(event, self.seen))
        self.seconds += time.perf_counter() - start

    def before_agent_calls(self, step: int, calls: list[ToolCallView], conversation: Conversation) -> None:
        for index, call in enumerate(calls):
            if self.tool_types.get(call.name) != "WRITE":
                continue
            start = time.perf_counter()
            # as the live wrapper gates: the message's earlier calls issued, not yet executed
            seen = self.seen.gated_at(calls[:index])
            (decision, after), used = self._metered(partial(self._decide_and_follow, call, seen))
            self.seconds += time.perf_counter() - start
            # a plug-in that calls its model around llm_call reports its own usage on the decision
            self.on_write(self.name, step, call, decision, after, used if used.llm_calls else decision.usage)

    def _decide_and_follow(self, call: ToolCallView, seen: Conversation) -> tuple[GuardDecision, str | None]:
        decision = self._decide(self.session, call, seen)
        after = None
        if self.follow_reads and decision.verdict == Verdict.VERIFY and decision.required_reads:
            after = self._after_reads(call, decision, seen)
        return decision, after

    @staticmethod
    def _decide(session: GuardSession | None, call: ToolCallView, seen: Conversation) -> GuardDecision:
        if session is None:
            return GuardDecision.allow()
        try:
            return session.before_write(call, seen)
        except Exception as exc:  # a crashing guard holds, as in live runs
            return GuardDecision(verdict=Verdict.VERIFY, reason=f"guard error: {type(exc).__name__}: {exc}",
                                 rule_id=f"{GUARD_ERROR_RULE}.exception")

    def _after_reads(self, call: ToolCallView, decision: GuardDecision, seen: Conversation) -> str:
        """Gate again in a fresh session after the reads the VERIFY names
        (:func:`tauguard.probes.follow_reads.gate_after_reads`; reads do not change τ²'s
        databases, so they run in the replay's environment)."""
        from tauguard.probes.follow_reads import gate_after_reads

        session = self.strategy.new_session(self.context)
        if session is None:
            return Verdict.ALLOW.value
        # the reads come before the message's calls; its earlier calls follow them again
        earlier = seen.pending_calls()
        conversation = Conversation(events=list(seen.events[: seen.settled()]))
        feed_session(session, conversation)
        try:
            final, _ = gate_after_reads(session, self.domain, self.env, conversation, call, decision, "audit-read", earlier)
        except Exception:  # a crashing guard holds, as in live runs
            return Verdict.VERIFY.value
        return final.verdict.value


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class _Part:
    """What one process's share of the simulations gave."""

    audited: dict[str, list[AuditedWrite]]
    replay: ReplayStats = field(default_factory=ReplayStats)
    seconds: dict[str, float] = field(default_factory=partial(defaultdict, float))  # hook time per strategy
    usage: dict[str, GuardUsage] = field(default_factory=dict)
    scripted: int = 0


@dataclass(frozen=True)
class GuardModel:
    """The model the LLM backends ask, and the provider discipline of its calls.

    ``args``: litellm arguments (``api_base``, ``temperature``, ...); ``no_key``: its server
    needs no key (a placeholder is sent); ``cache``: the ``--cache`` folder; ``rate_limits``:
    model -> [RPM] or [RPM, TPM], split over ``share`` processes.
    """

    model: str
    args: dict[str, Any] = field(default_factory=dict)
    no_key: bool = False
    cache: str | None = None
    rate_limits: dict[str, list[float]] = field(default_factory=dict)
    share: int = 1

    @contextmanager
    def installed(self) -> Iterator[None]:
        """This process's completions under this discipline inside the block (a loky worker
        installs its own), and the process's own again after it."""
        from tauguard.provider import RateLimit, install, state

        current = state()
        saved = (dict(current.limits), current.cache, current.no_key)
        limits = {m: RateLimit(v[0], v[1] if len(v) > 1 else None) for m, v in self.rate_limits.items()}
        install(limits, share=max(1, self.share), cache=self.cache, no_key=self.no_key)
        try:
            yield
        finally:
            current.limits, current.cache, current.no_key = saved
            current.buckets.clear()


def _installed_audit(guard: GuardModel | None, *args: Any) -> _Part:
    """:func:`_audit_records` (same arguments after ``guard``) under the guard model's provider discipline."""
    with guard.installed() if guard is not None else nullcontext():
        return _audit_records(*args)


def _audit_records(
    records: list[TrialRecord],
    domain: str,
    strategies: list[str],
    options: dict[str, Any],
    follow_reads: bool,
    guard: GuardModel | None,
    progress: Callable[[int, int], None] | None = None,
    definitions: dict[str, Any] | None = None,
) -> _Part:
    """Replay ``records`` and gate their writes with every strategy (one process)."""
    created = {name: create_strategy(name, options) for name in strategies}
    tasks = run_tasks(domain, {r.task_id for r in records}, definitions)
    agent_types, _ = t2.tool_types(domain)
    part = _Part(audited={name: [] for name in strategies}, usage={name: GuardUsage() for name in strategies})
    audited = part.audited
    for index, rec in enumerate(records):
        task = tasks[rec.task_id]
        gold = gold_writes(domain, task)
        passed = bool(rec.success)
        env = fresh_environment(domain, task)
        messages = (rec.simulation or {}).get("messages") or []
        errors = _recorded_errors(messages)
        first_off_gold: dict[str, bool] = {}

        def on_write(name: str, step: int, call: ToolCallView, decision: GuardDecision, after: str | None, usage: GuardUsage,
                     rec: TrialRecord = rec, gold: set[tuple[str, str]] = gold, passed: bool = passed, seen_first: dict[str, bool] = first_off_gold,
                     errors: dict[str, bool] = errors) -> None:
            match = (call.name, canonical_arguments(call.arguments)) in gold
            first = False
            if not match and not seen_first.get(name):
                seen_first[name] = first = True
            audited[name].append(AuditedWrite(
                task_id=rec.task_id, trial=rec.trial, step=step, call_id=call.id, tool=call.name, arguments=call.arguments,
                write_class=write_class(match, passed), first_off_gold=first, recorded_error=errors.get(call.id, False),
                verdict=decision.verdict.value, rule_id=decision.rule_id, reason=decision.reason,
                verdict_after_reads=after, usage=usage,
            ))

        context = session_context(domain, rec.task_id, guard_llm=guard.model if guard else None,
                                  guard_llm_args=guard.args if guard else None)
        gates = [
            _Gate(name, strategy, context, env, domain, agent_types, follow_reads, on_write)
            for name, strategy in created.items()
        ]
        replay = replay_recorded(domain, task, messages, observers=gates, environment=env)
        for gate in gates:
            part.seconds[gate.name] += gate.seconds
            part.usage[gate.name] = part.usage[gate.name] + gate.usage
            part.scripted += gate.scripted
        _count_replay(part.replay, rec, replay.tool_calls, replay.mismatches)
        if progress is not None:
            progress(index + 1, len(records))
    return part


def audit_run(
    run: Run,
    strategies: list[str],
    options: dict[str, Any] | None = None,
    follow_reads: bool = False,
    guard_llm: str | GuardModel | None = None,
    task_ids: list[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    labels: Sequence[LabelledWrite] | None = None,
) -> AuditReport:
    """Audit every recorded conversation of ``run`` with each strategy's gate.

    ``guard_llm``: the model of the LLM backends (a model string, or a :class:`GuardModel`
    with its litellm arguments, e.g. ``api_base``; temperature 0 unless they say otherwise;
    keys come from the environment only). ``workers`` > 1 spreads the simulations over joblib
    (loky) processes. ``labels``: the labelled real-write benchmark (default: the packaged
    one; ``[]`` for none); each strategy's decisions on the run's labelled writes are
    summarised as false holds and catches. Raises UnknownStrategyError (a ValueError) for an
    unknown strategy name.
    """
    started = time.perf_counter()
    options = dict(options or {})
    for name in strategies:
        create_strategy(name, options)  # fail fast on a bad name or options
    records: list[TrialRecord] = [
        r for r in run.records
        if r.simulation is not None and r.error is None and (not task_ids or r.task_id in task_ids)
    ]
    domain = run.manifest.domains[0]
    definitions = run.manifest.provenance.get("task_definitions")
    guard = GuardModel(guard_llm) if isinstance(guard_llm, str) else guard_llm
    workers = max(1, min(workers, len(records)))
    if guard is not None:
        # the run defaults' temperature 0 for the guard role, unless the arguments say otherwise
        guard = replace(guard, args={"temperature": 0.0, **guard.args}, share=workers)
    if workers == 1:
        merged = _installed_audit(guard, records, domain, strategies, options, follow_reads, guard, progress, definitions)
    else:
        from joblib import Parallel, delayed

        chunks = [records[i::workers] for i in range(workers)]
        parts: list[_Part] = Parallel(n_jobs=workers, backend="loky")(
            delayed(_installed_audit)(guard, chunk, domain, strategies, options, follow_reads, guard, None, definitions)
            for chunk in chunks
        )
        order = {r.key: i for i, r in enumerate(records)}
        merged = _Part(
            audited={name: sorted((w for part in parts for w in part.audited[name]),
                                  key=lambda w: (order[(domain, w.task_id, w.trial)], w.step)) for name in strategies},
            usage={name: sum((part.usage[name] for part in parts), GuardUsage()) for name in strategies},
            scripted=sum(part.scripted for part in parts),
        )
        for part in parts:
            for field_ in ("simulations", "tool_calls", "mismatches", "benign", "unfaithful_simulations"):
                setattr(merged.replay, field_, getattr(merged.replay, field_) + getattr(part.replay, field_))
            merged.replay.details.extend(part.replay.details)
            for name, spent in part.seconds.items():
                merged.seconds[name] += spent
        if progress is not None:
            progress(len(records), len(records))
    audited, replay_stats, seconds = merged.audited, merged.replay, merged.seconds
    index, stray = index_labels(records, load_labels() if labels is None else labels)
    first_strategy = audited[strategies[0]] if strategies else []
    class_counts = Counter(w.write_class for w in first_strategy)
    passed_n = sum(bool(r.success) for r in records)
    return AuditReport(
        left_out=left_out_of(run.manifest),
        run_id=run.manifest.run_id,
        source=run.manifest.source,
        simulated=run.manifest.simulated or any(r.simulated for r in run.records),
        domain=domain,
        agent_llm=run.manifest.agent_llm,
        user_llm=run.manifest.user_llm,
        simulations=len(records),
        passed=passed_n,
        failed=len(records) - passed_n,
        writes=len(first_strategy),
        class_counts={c: class_counts.get(c, 0) for c in WRITE_CLASSES},
        follow_reads=follow_reads,
        replay=replay_stats,
        strategies=[
            with_labels(summarize_strategy(name, options, audited[name], records, follow_reads, seconds[name], merged.usage[name]),
                        label_audit(name, audited[name], index, stray, follow_reads, GUARD_ERROR_RULE))
            for name in strategies
        ],
        seconds=time.perf_counter() - started,
        guard_llm=guard.model if guard else None,
        labels_checked=labels is None or len(labels) > 0,
        guard_api_base=mask_userinfo(str(guard.args["api_base"])) if guard and guard.args.get("api_base") else None,
        scripted_answers=merged.scripted,
    )


def _recorded_errors(messages: list[dict[str, Any]]) -> dict[str, bool]:
    return {str(m.get("id")): bool(m.get("error")) for m in messages if m.get("role") == "tool"}


def _count_replay(stats: ReplayStats, rec: TrialRecord, tool_calls: int, mismatches: list[Mismatch]) -> None:
    stats.simulations += 1
    stats.tool_calls += tool_calls
    stats.mismatches += len(mismatches)
    stats.benign += sum(m.benign for m in mismatches)
    stats.unfaithful_simulations += int(any(not m.benign for m in mismatches))
    stats.details.extend({"task_id": rec.task_id, "trial": rec.trial, **m.model_dump()} for m in mismatches)


def with_labels(audit: StrategyAudit, labels: LabelAudit | None) -> StrategyAudit:
    """The strategy's audit with its label audit; over-blocking is then judged by the labels
    (false holds on complying writes) wherever complying writes are labelled, not by the proxy."""
    update: dict[str, Any] = {"labels": labels}
    if labels is not None and labels.false_holds.writes:
        update["over_blocking"] = (labels.false_holds.rate or 0.0) > OVER_BLOCKING
        update["over_blocking_basis"] = "labels"
    return audit.model_copy(update=update)


def summarize_strategy(
    name: str, options: dict[str, Any], writes: list[AuditedWrite], records: list[TrialRecord],
    follow_reads: bool, seconds: float = 0.0, usage: GuardUsage | None = None,
) -> StrategyAudit:
    """Hold rates per outcome class, rescue potential, per-rule counts and cost of one strategy.

    ``usage``: every LLM call of its hooks (default: the sum over its writes' decisions)."""
    by_class: dict[str, ClassStats] = {}
    for cls in WRITE_CLASSES:
        mine = [w for w in writes if w.write_class == cls]
        held = sum(w.held for w in mine)
        errors = sum(w.guard_error for w in mine)
        decided = len(mine) - errors
        stats = ClassStats(writes=len(mine), held=held, guard_errors=errors,
                           verdicts=dict(Counter(w.verdict for w in mine)), hold_rate=_ratio(held, decided))
        if follow_reads:
            stats.held_after_reads = sum(w.held_after_reads for w in mine)
            stats.hold_rate_after_reads = _ratio(stats.held_after_reads, decided)
        by_class[cls] = stats
    failed = {(r.task_id, r.trial) for r in records if not r.success}
    firsts = [w for w in writes if w.first_off_gold and (w.task_id, w.trial) in failed]
    rescued = sum(w.held for w in firsts)
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    if usage is None:
        usage = sum((w.usage for w in writes), GuardUsage())
    for w in writes:
        if w.held:
            per_rule[w.rule_id or "(no rule id)"][w.write_class] += 1
    fbp = by_class["gold_passed"].hold_rate
    return StrategyAudit(
        strategy=name,
        options=dict(options),
        writes=len(writes),
        by_class=by_class,
        false_block_proxy=fbp,
        catch_proxy=by_class["off_gold_failed"].hold_rate,
        failed_with_off_gold=len(firsts),
        rescued=rescued,
        rescue_potential=_ratio(rescued, len(firsts)),
        over_blocking=fbp is not None and fbp > OVER_BLOCKING,
        per_rule={rule: dict(counts) for rule, counts in sorted(per_rule.items(), key=lambda kv: -sum(kv[1].values()))},
        guard_usage=usage,
        guard_usage_per_write=UsagePerWrite.of(usage, len(writes)),
        guard_errors=sum(w.guard_error for w in writes),
        seconds=seconds,
        held_writes=[w for w in writes if w.held],
    )
