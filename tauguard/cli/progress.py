"""`tauguard run`'s progress display: a rich bar on a terminal, plain lines in CI logs.

Both show the pass rate and infrastructure errors; real-LLM runs add, summed over the
records so far, cost and tokens per role, cache hits, retries and seconds waited (rate
limiter and backoff), e.g. ``cost agent $0.0123 user $0.0045 · tokens agent 12.3k user
4.5k · cache 8 hits · retries 2 · waited 4.2 s``. Sim runs make no LLM calls: none of that.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import typer

from tauguard.runs.records import USAGE_ROLES

if TYPE_CHECKING:
    from tauguard.execution.batch import Progress
    from tauguard.runs.records import TrialRecord


def _tokens(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


@dataclass
class UsageTally:
    """LLM usage per role summed over the records seen so far."""

    cost: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    cache_hits: int = 0
    retries: int = 0
    waited_s: float = 0.0

    def add(self, record: "TrialRecord") -> None:
        """Account one record's usage (roles without tokens, cost or cache hits, e.g. the
        sim agent's, are skipped)."""
        for role, usage in record.usage.items():
            if usage.prompt_tokens or usage.completion_tokens or usage.cost or usage.cache_hits:
                self.cost[role] = self.cost.get(role, 0.0) + (usage.cost or 0.0)
                self.tokens[role] = self.tokens.get(role, 0) + usage.prompt_tokens + usage.completion_tokens
            self.cache_hits += usage.cache_hits
            self.retries += usage.retries
            self.waited_s += usage.waited_s

    def render(self) -> str:
        """One compact line; empty when no LLM was called (sim runs)."""
        roles = sorted(self.tokens, key=lambda r: (USAGE_ROLES.index(r) if r in USAGE_ROLES else len(USAGE_ROLES), r))
        parts = []
        if roles:
            parts.append("cost " + " ".join(f"{r} ${self.cost[r]:.4f}" for r in roles))
            parts.append("tokens " + " ".join(f"{r} {_tokens(self.tokens[r])}" for r in roles))
        if self.cache_hits:
            parts.append(f"cache {self.cache_hits} hits")
        if self.retries:
            parts.append(f"retries {self.retries}")
        if self.waited_s:
            parts.append(f"waited {self.waited_s:.1f} s")
        return " · ".join(parts)


def status_text(progress: "Progress", tally: UsageTally) -> str:
    """The display's statistics: pass rate, infrastructure errors, then LLM usage."""
    rate = progress.pass_rate
    stats = f"pass {rate:.2f}" if rate is not None else "pass -"
    if progress.errors:
        stats += f", {progress.errors} infra errors"
    usage = tally.render()
    return f"{stats} · {usage}" if usage else stats


class Eta:
    """Time remaining, from the completion rate of this process's units since they started.

    Start-up (imports, warm-up, forking) happens before the first unit starts, and units
    recorded before a resume finished in another process: counting either makes the estimate
    many times too high. With concurrency, units finish in waves: the first wave's completions
    arrive within moments of each other, so a rate taken between completions alone reads several
    times too fast (0.2-0.66x of the real time left with 4-8 units in flight). So each unit's
    own duration dates when it started: the rate is the units finished over the time since the
    earliest of them started, which counts every unit in flight (``completed / elapsed`` with
    the start-up left out). Observations without a duration fall back to the rate between this
    process's first and latest completions. No estimate until ``min_intervals + 1`` units are seen.
    """

    def __init__(self, min_intervals: int = 2, clock: Any = time.perf_counter) -> None:
        self.min_intervals = min_intervals
        self._clock = clock
        self._first: float | None = None
        self._last: float | None = None
        self._started: float | None = None  # the earliest start of an observed unit
        self._timed = True  # every observation carried its duration
        self._seen = 0

    def observe(self, duration_s: float | None = None) -> None:
        """One unit finished now (it took ``duration_s`` seconds, when known)."""
        now = self._clock()
        if self._first is None:
            self._first = now
        self._last = now
        self._seen += 1
        if duration_s is None or duration_s != duration_s or duration_s < 0:
            self._timed = False
        else:
            start = now - duration_s
            self._started = start if self._started is None else min(self._started, start)

    def seconds_left(self, remaining: int) -> float | None:
        """Seconds until ``remaining`` more units finish at the measured rate; None: not known yet."""
        if self._seen - 1 < self.min_intervals or self._first is None or self._last is None:
            return None
        if self._timed and self._started is not None and self._last > self._started:
            return remaining * (self._last - self._started) / self._seen
        intervals = self._seen - 1
        if self._last <= self._first:
            return None
        return remaining * (self._last - self._first) / intervals

    def text(self, remaining: int) -> str:
        """``eta 12s`` style text: ``-`` until the rate is known, ``0s`` when nothing is left."""
        if remaining <= 0:
            return "0s"
        left = self.seconds_left(remaining)
        if left is None:
            return "-"
        minutes, seconds = divmod(int(round(left)), 60)
        return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class RunDisplay:
    """A rich progress bar on a terminal; plain lines in CI logs."""

    def __init__(self, total: int, already: int, plain: bool) -> None:
        self.plain = plain
        self.total = total
        self.tally = UsageTally()
        self.eta = Eta()
        self._progress: Any = None
        if not plain:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

            # Our own ETA column: rich's counts the start-up in its rate (see Eta).
            self._progress = RichProgress(
                TextColumn("[bold]simulations"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"), transient=False,
            )
            self._task = self._progress.add_task("run", total=total, completed=already, stats="", eta="-")
            self._progress.start()
        elif already:
            typer.echo(f"{already}/{total} simulations already done", err=True)

    def update(self, record: "TrialRecord", progress: "Progress") -> None:
        """Show one finished unit."""
        self.tally.add(record)
        self.eta.observe(record.duration_s)
        stats = status_text(progress, self.tally)
        eta = self.eta.text(progress.total - progress.done)
        if self._progress is not None:
            self._progress.update(self._task, completed=progress.done, stats=stats, eta=eta)
            return
        # Plain mode is for logs: about 50 lines per run, plus every failure and error.
        every = max(1, progress.total // 50)
        if record.success and progress.done % every and progress.done != progress.total:
            return
        status = "ERROR" if record.error else ("pass" if record.success else "fail")
        typer.echo(
            f"[{progress.done}/{progress.total}] {record.domain}/{record.task_id} trial {record.trial}: {status} "
            f"| {stats} | eta {eta}",
            err=True,
        )

    def close(self) -> None:
        """Stop the bar (plain mode: nothing to do)."""
        if self._progress is not None:
            self._progress.stop()
