"""`tauguard dialogue eval`: the dialogue judge's precision and recall on labelled real exchanges."""

from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from tauguard.cli.common import fail
from tauguard.errors import TauguardInputError

app = typer.Typer(help="The dialogue judge (explicit yes, polarity, stated reasons; see docs/dialogue.md).",
                  no_args_is_help=True, add_completion=False)


class OutputFormat(str, Enum):
    """Output formats of `dialogue eval`."""

    table = "table"
    json = "json"
    markdown = "markdown"


class BackendName(str, Enum):
    """The dialogue judge's backends."""

    compiled = "compiled"
    llm = "llm"


PLUMBING_NOTE = "plumbing only: run against a stand-in server, its scores say nothing about a real model"


def default_trajectories() -> list[Path]:
    """Where the cases' τ² results files are looked for: ``$TAUGUARD_TRAJECTORIES``, then
    ``shared/trajectories`` in the nearest folder above the current one or the checkout
    that has one (the project's ``../shared``)."""
    found: list[Path] = []
    env = os.environ.get("TAUGUARD_TRAJECTORIES")
    if env:
        found.append(Path(env))
    checkout = Path(__file__).resolve().parents[2]
    for base in (Path.cwd().resolve(), checkout):
        found.extend(parent / "shared" / "trajectories" for parent in base.parents)
    return [p for p in dict.fromkeys(found) if p.is_dir()][:1] if not env else [p for p in dict.fromkeys(found) if p.is_dir()]


def _case_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.glob("*.jsonl")))
        elif path.is_file():
            files.append(path)
        else:
            fail(f"--cases: '{path}' is neither a file nor a folder")
    if not files:
        fail("--cases: no *.jsonl case files found in " + ", ".join(str(p) for p in paths))
    return files


def _is_loopback(llm_args: dict[str, Any]) -> bool:
    base = str(llm_args.get("api_base") or llm_args.get("base_url") or "")
    return any(host in base for host in ("127.0.0.1", "localhost", "[::1]"))


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _rows(evaluation: Any, by_source: bool = False) -> list[list[str]]:
    head = {"all": "all (headline)", "development": "development (sealed excluded)", "sealed": "sealed only"}[evaluation.split]
    rows = [[head, *_counts(evaluation.overall)]]
    if evaluation.writes.tp + evaluation.writes.fp + evaluation.writes.fn + evaluation.writes.tn:
        rows.append(["per write (any labelled pair)", *_counts(evaluation.writes)])
    if evaluation.split == "all":
        rows += [[f"split: {k}", *_counts(c)] for k, c in evaluation.by_split.items()]
        rows += [[f"split: {k}, per write", *_counts(c)] for k, c in evaluation.writes_by_split.items()]
    if by_source:
        rows += [[f"source: {k}", *_counts(c)] for k, c in evaluation.by_source.items()]
        rows += [[f"source: {k}, per write", *_counts(c)] for k, c in evaluation.writes_by_source.items()]
    rows += [[f"labeller: {k.split(' ')[0]}", *_counts(c)] for k, c in evaluation.by_labeller.items()]
    rows += [[f"type: {k}", *_counts(c)] for k, c in evaluation.by_case_type.items()]
    if evaluation.repeats.tp + evaluation.repeats.fp + evaluation.repeats.fn + evaluation.repeats.tn:
        rows.append(["repeats (apart)", *_counts(evaluation.repeats)])
    return rows


def _by_rule(errors: list[Any]) -> list[tuple[str, list[Any]]]:
    """Errors grouped by the rule that rejected the pair ("taken" for false positives), largest group first."""
    groups: dict[str, list[Any]] = {}
    for e in errors:
        groups.setdefault(e.rule or "unknown", []).append(e)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def _counts(c: Any) -> list[str]:
    return [_ratio(c.precision), _ratio(c.recall), str(c.tp), str(c.fp), str(c.fn), str(c.tn)]


_HEADER = ["slice", "precision", "recall", "tp", "fp", "fn", "tn"]


def _banner(evaluation: Any) -> str:
    notes = [f"judge {evaluation.judge}", f"{evaluation.cases} cases"]
    if evaluation.ambiguous:
        notes.append(f"{evaluation.ambiguous} ambiguous left out")
    if evaluation.packaged_conversation:
        notes.append(f"{evaluation.packaged_conversation} judged on the conversation shipped with the case")
    if evaluation.without_conversation:
        notes.append(f"{evaluation.without_conversation} judged without their conversation (not shipped, file not "
                     "found: only statement, reply and write; figures not comparable to docs/dialogue.md)")
    if evaluation.plumbing_only:
        notes.append(PLUMBING_NOTE)
    return "; ".join(notes)


@app.command("eval")
def eval_(
    cases: list[Path] = typer.Option(None, "--cases", help="case files or folders (*.jsonl; repeatable); default: the packaged cases"),
    backends: list[BackendName] = typer.Option(None, "--backend", help="compiled or llm (repeatable); default: compiled"),
    trajectories: list[Path] = typer.Option(None, "--trajectories", help="folders holding the cases' τ² results files, for cases whose conversation is not shipped with them (repeatable); default: $TAUGUARD_TRAJECTORIES, else the nearest shared/trajectories above the current folder or the checkout"),
    guard_llm: str = typer.Option(None, "--guard-llm", help="the model of the llm backend (a litellm model string); default: none, needed with --backend llm"),
    llm_args: str = typer.Option("{}", "--llm-args", help="JSON arguments of the llm backend's completions (api_base, ...)"),
    plumbing_only: bool = typer.Option(False, "--plumbing-only", help="label the llm backend's scores as plumbing only (automatic for a loopback api_base)"),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    show_errors: bool = typer.Option(False, "--errors", help="also list the cases each backend got wrong (the sealed files' only with --sealed)"),
    by_source: bool = typer.Option(False, "--by-source", help="also score every source file apart (per pair and per write)"),
    exclude_sealed: bool = typer.Option(False, "--exclude-sealed", help="score the development files only (the sealed split left out; docs/dialogue.md)"),
    sealed_only: bool = typer.Option(False, "--sealed", help="score the sealed files only (read their errors only when the work is done)"),
) -> None:
    """Precision and recall of each backend on "this write was explicitly confirmed", by case type."""
    from tauguard.dialogue import judge
    from tauguard.dialogue.cases import load_cases
    from tauguard.dialogue.evaluate import evaluate
    from tauguard.dialogue.llm import DialogueJudgeError

    from tauguard.dialogue.sealed import Split, changed_sources

    chosen = list(dict.fromkeys(backends or [BackendName.compiled]))
    if exclude_sealed and sealed_only:
        fail("--exclude-sealed and --sealed: choose one (the development files, or the sealed ones)")
    split: Split = "development" if exclude_sealed else "sealed" if sealed_only else "all"
    try:
        args = json.loads(llm_args)
    except json.JSONDecodeError as exc:
        fail(f"--llm-args: not JSON ({exc.msg}); give an object such as '{{\"api_base\": \"http://...\"}}'")
    if not isinstance(args, dict):
        fail("--llm-args: give a JSON object, e.g. '{\"api_base\": \"http://...\"}'")
    if BackendName.llm in chosen and not guard_llm:
        fail("--backend llm needs --guard-llm MODEL (a litellm model string)")
    from tauguard.secrets import credential_keys, remember_config_secrets

    remember_config_secrets(args)  # header values and URL userinfo: scrubbed from anything written
    keys = credential_keys(args)
    if keys:
        fail(
            f"--llm-args sets '{keys[0]}': API keys come only from the environment (e.g. OPENAI_API_KEY), "
            "so they are never written to reports or traceback files"
        )
    if BackendName.llm in chosen and guard_llm:
        from tauguard.execution.preflight import PlanError, check_provider

        try:  # offline, before any case is judged: not 5 retries per case against no provider
            check_provider("guard", guard_llm, args)
        except PlanError as exc:
            fail(f"--guard-llm: {exc.first_line()}")
    try:
        loaded = load_cases(_case_files(cases) if cases else None)
    except TauguardInputError as exc:
        fail(f"--cases: {exc.first_line()}")
    folders = list(trajectories) if trajectories else default_trajectories()
    for changed in changed_sources(folders):
        typer.echo(f"warning: {changed} differs from the sealed file (sha256 in tauguard/dialogue/data/sealed.toml)", err=True)
    from tauguard.dialogue.hard_negatives import evaluate_hard_negatives

    results = []
    hard: dict[int, tuple[Any, list[Any]]] = {}
    for backend in chosen:
        which = judge(backend.value, guard_llm, args)
        plumbing = backend is BackendName.llm and (plumbing_only or _is_loopback(args))
        try:
            results.append(evaluate(which, loaded, folders, plumbing_only=plumbing, split=split))
        except DialogueJudgeError as exc:  # the model could not be reached or answered nothing usable
            from tauguard.secrets import scrub

            fail(scrub(str(exc).splitlines()[0]))
        if split != "sealed" and not cases:  # real cases changed by one edit, apart from the headline
            confusion, hard_results = evaluate_hard_negatives(which, loaded, folders)
            hard[len(results) - 1] = (confusion, hard_results)
    withheld = 0
    if split != "sealed":  # the sealed files' errors are not read while rules are designed
        for r in results:
            withheld = sum(e.sealed for e in r.errors)
            r.errors = [e for e in r.errors if not e.sealed]
    if show_errors and withheld:
        typer.echo(f"note: {withheld} errors on sealed files withheld (ask with --sealed when the work is done)", err=True)
    if fmt is OutputFormat.json:
        typer.echo(json.dumps([r.model_dump(mode="json", exclude=set() if show_errors else {"errors"}) |
                               {"precision": r.overall.precision, "recall": r.overall.recall,
                                "writes_precision": r.writes.precision, "writes_recall": r.writes.recall}
                               | ({"hard_negatives": hard[k][0].model_dump(mode="json")} if k in hard else {})
                               for k, r in enumerate(results)], indent=2))
        return
    for k, r in enumerate(results):
        rows = _rows(r, by_source)
        if k in hard and hard[k][1]:
            rows.append([f"hard negatives ({len(hard[k][1])} edited real cases)", *_counts(hard[k][0])])
        if fmt is OutputFormat.markdown:
            typer.echo(f"### {r.judge}\n\n{_banner(r)}\n")
            typer.echo("| " + " | ".join(_HEADER) + " |")
            typer.echo("|" + "---|" * len(_HEADER))
            for row in rows:
                typer.echo("| " + " | ".join(row) + " |")
            typer.echo("")
        else:
            from rich.console import Console
            from rich.table import Table

            table = Table(title=f"dialogue judge {r.judge}", caption=_banner(r))
            for h in _HEADER:
                table.add_column(h, justify="left" if h == "slice" else "right")
            for row in rows:
                table.add_row(*row)
            Console(width=max(100, len(_banner(r)) + 4)).print(table)
        if show_errors:
            for rule, errors in _by_rule(r.errors):
                typer.echo(f"  rule {rule}: {len(errors)}")
                for e in errors:
                    why = f"; {e.detail}" if e.detail else ""
                    typer.echo(f"    wrong: {e.id} ({e.case_type}, labelled {e.label}, judged "
                               f"{'confirmed' if e.predicted else 'not_confirmed'}{why})")
            for h in hard.get(k, (None, []))[1]:
                if h.predicted != (h.label == "confirmed") or h.fired != h.rule:
                    typer.echo(f"  hard negative {h.id}: made for {h.rule}, judged {'confirmed' if h.predicted else h.fired}")
