"""`tauguard classifier train|eval|ablate`: the learned pre-action gate and the paper's
measurements (docs/classifier.md). Heavy imports (scikit-learn, tau2) happen inside commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import OutputFormat, check_output_file, fail, ranged

# tauguard.classifier.metrics.DEFAULT_RESAMPLES (the paper's 5,000), not imported: it loads numpy
# at start-up; a test keeps the two equal.
DEFAULT_RESAMPLES = 5000

app = typer.Typer(
    help="The learned classifier gate: train on probes, evaluate, and run the paper's ablations (see docs/classifier.md).",
    no_args_is_help=True,
    add_completion=False,
)

REPRESENTATION_HELP = "raw, masked, structured or raw+policy."
RETRIEVER_HELP = "bm25, tfidf, minilm (the minilm extra), or encoder (with --encoder PATH)."
POLICY_HELP = "The policy clause given at test time: gold, retrieved, mismatched or none."


def _check_choice(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        fail(f"unknown {what} '{value}'; allowed: {', '.join(allowed)}")


def _load(path: Path) -> Any:
    from tauguard.classifier.dataset import load_probe_set

    return load_probe_set(path)  # TauguardInputError -> one error line, exit 2 (cli.main)


def _banner(*sets: Any) -> str:
    from tauguard.classifier.render import SIM_BANNER

    return SIM_BANNER if any(s.simulated for s in sets) else ""


def _emit(fmt: OutputFormat, text_parts: list[str], data: dict[str, Any], *sets: Any) -> None:
    from tauguard.classifier.render import as_json

    if fmt == OutputFormat.json:
        data["simulation"] = any(s.simulated for s in sets)
        typer.echo(as_json(data))
        return
    banner = _banner(*sets)
    typer.echo("\n\n".join(([banner] if banner else []) + text_parts))


@app.command("train")
def train(
    probes: Path = typer.Option(..., "--probes", "-p", help="Training probes (tauguard probes build --split train)."),
    output: Path = typer.Option(..., "--output", "-o", help="Where to write the artifact (gzipped JSON, e.g. runs/clf-airline.json.gz)."),
    representation: str = typer.Option("structured", "--representation", "-r", help=REPRESENTATION_HELP),
    retriever: str = typer.Option("bm25", "--retriever", help=RETRIEVER_HELP),
    encoder: Optional[str] = typer.Option(None, "--encoder", help="Local sentence-transformers model directory (retriever encoder). \\[default: none]"),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of the classifier and of the mismatched / injected clause draws."),
    c: float = typer.Option(1.0, "--C", **ranged("--C"), help="Inverse regularisation strength of the logistic regression."),
    train_policy: str = typer.Option(
        "gold", "--train-policy", help="The clause in the training states: gold (the paper), retrieved (as deployed) or none."
    ),
    test: Optional[Path] = typer.Option(None, "--test", help="Also evaluate on these (disjoint) probes, retrieved clause. \\[default: none]"),
    resamples: int = typer.Option(DEFAULT_RESAMPLES, "--resamples", **ranged("--resamples"), help="Task-clustered bootstrap resamples (the paper: 5,000)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Train the classifier (TF-IDF + class-balanced logistic regression) on gold-clause states
    and save it with its training metadata."""
    from tauguard.classifier.experiments import evaluate
    from tauguard.classifier.model import train_artifact
    from tauguard.classifier.render import SCORE_HEADERS, detail, scores_rows, table
    from tauguard.classifier.retrieval import RETRIEVERS
    from tauguard.classifier.state import REPRESENTATIONS

    _check_choice(representation, REPRESENTATIONS, "representation")
    _check_choice(retriever, RETRIEVERS, "retriever")
    _check_choice(train_policy, ("gold", "retrieved", "none"), "training policy input")
    check_output_file(output, "-o/--output")
    train_set = _load(probes)
    test_set = _load(test) if test is not None else None
    artifact = train_artifact(
        train_set, representation, retriever=retriever, encoder=encoder, seed=seed, C=c, train_policy=train_policy  # type: ignore[arg-type]
    )
    result = evaluate(artifact, test_set, "retrieved", n_resamples=resamples, seed=seed) if test_set is not None else None
    try:
        artifact.save(output)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    meta = artifact.meta
    parts = [
        f"trained {meta.representation} classifier for {meta.domain} on {len(meta.probe_ids)} probes "
        f"({', '.join(f'{k} {v}' for k, v in sorted(meta.labels.items()))}); {meta.train_policy} clause, retriever {meta.retriever}, seed {meta.seed}\n"
        f"probe set sha256 {meta.probe_set_sha256[:16]}…; artifact written to {output}"
    ]
    if train_set.unmatched_clauses:
        parts.append(f"note: {train_set.unmatched_clauses} probe clause(s) are not in the {meta.domain} clause table")
    if result is not None:
        parts.append(table(SCORE_HEADERS, [scores_rows(f"test, {result.condition} clause", result.scores)], fmt.value))
        parts.append(detail(result.scores, fmt.value))
    data: dict[str, Any] = {"meta": meta, "test": result.scores if result else None}
    _emit(fmt, parts, data, *(s for s in (train_set, test_set) if s is not None))


@app.command("eval")
def eval_(
    artifact_path: Path = typer.Option(..., "--artifact", "-a", help="A trained artifact (tauguard classifier train)."),
    probes: Path = typer.Option(..., "--probes", "-p", help="Test probes, disjoint from the training probes."),
    policy: str = typer.Option("retrieved", "--policy", help=POLICY_HELP),
    versus: Optional[str] = typer.Option(None, "--versus", help="A second policy input: paired comparison on the same probes. \\[default: none]"),
    representation: Optional[str] = typer.Option(None, "--representation", "-r", help="Expected representation (an artifact trained on another is an error). \\[default: the artifact's]"),
    resamples: int = typer.Option(DEFAULT_RESAMPLES, "--resamples", **ranged("--resamples"), help="Task-clustered bootstrap resamples (the paper: 5,000)."),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Bootstrap seed."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Per-class precision / recall / F1, macro-F1 with a task-clustered bootstrap CI and the
    confusion matrix of an artifact on test probes; --versus adds a paired comparison."""
    from tauguard.classifier.experiments import evaluate
    from tauguard.classifier.metrics import paired_delta
    from tauguard.classifier.model import POLICY_INPUTS, load_artifact
    from tauguard.classifier.render import DELTA_HEADERS, SCORE_HEADERS, delta_rows, detail, scores_rows, table

    _check_choice(policy, POLICY_INPUTS, "policy input")
    if versus is not None:
        _check_choice(versus, POLICY_INPUTS, "policy input")
    artifact = load_artifact(artifact_path, representation=representation)
    test_set = _load(probes)
    if test_set.domain != artifact.meta.domain:
        fail(f"artifact '{artifact_path}' was trained for domain '{artifact.meta.domain}', the probes are '{test_set.domain}'")
    first = evaluate(artifact, test_set, policy, n_resamples=resamples, seed=seed)  # type: ignore[arg-type]
    rows = [scores_rows(f"{policy} clause", first.scores)]
    deltas = []
    if versus is not None:
        second = evaluate(artifact, test_set, versus, n_resamples=resamples, seed=seed)  # type: ignore[arg-type]
        rows.append(scores_rows(f"{versus} clause", second.scores))
        gold = [e.label for e in test_set.examples]
        tasks = [e.task_id for e in test_set.examples]
        deltas.append(paired_delta(policy, first.predictions, versus, second.predictions, gold, tasks, n_resamples=resamples, seed=seed))
    parts = [
        f"{artifact.meta.representation} classifier ({artifact.meta.domain}, retriever {artifact.meta.retriever}) on {probes}",
        table(SCORE_HEADERS, rows, fmt.value),
        detail(first.scores, fmt.value),
    ]
    if deltas:
        parts.append(table(DELTA_HEADERS, delta_rows(deltas), fmt.value))
    data = {"meta": artifact.meta, "scores": {policy: first.scores}, "deltas": deltas}
    _emit(fmt, parts, data, test_set)


SECTIONS = ("table1", "representation", "recall", "injection", "leak")


@app.command("ablate")
def ablate(
    train_path: Optional[Path] = typer.Option(None, "--train", help="Training probes (or --real). \\[default: none]"),
    test_path: Optional[Path] = typer.Option(None, "--test", help="Test probes, disjoint (or --real). \\[default: none]"),
    real: Optional[str] = typer.Option(None, "--real", help="Instead of probe files: the real-write benchmark's states of this domain (airline or retail), split by task. \\[default: none]"),
    test_fraction: float = typer.Option(0.3, "--test-fraction", min=0.05, max=0.95, help="With --real: share of task clusters held out for test."),
    retriever: str = typer.Option("bm25", "--retriever", help="Retriever of the retrieved / injected clause: " + RETRIEVER_HELP),
    retrievers: str = typer.Option("bm25,tfidf", "--retrievers", help="Retrievers of the recall@k table (comma-separated)."),
    encoder: Optional[str] = typer.Option(None, "--encoder", help="Local sentence-transformers model directory. \\[default: none]"),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated sections: table1, representation, recall, injection, leak. \\[default: all five]"),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of training, clause draws and the bootstrap."),
    resamples: int = typer.Option(DEFAULT_RESAMPLES, "--resamples", **ranged("--resamples"), help="Task-clustered bootstrap resamples (the paper: 5,000)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """The paper's measurements: Table 1 (policy input gold / retrieved / mismatched / none),
    the representation ablation, exact-match recall@1/5/10 per retriever and class, and the
    gold-injection sweep with the structured - raw gap per p, and the leak check (clause-id-only
    baselines). --real DOMAIN runs them on real agents' decision states (task-disjoint split)."""
    from tauguard.classifier import experiments as ex
    from tauguard.classifier.render import DELTA_HEADERS, SCORE_HEADERS, delta_rows, scores_rows, table
    from tauguard.classifier.retrieval import RETRIEVERS

    sections = [s.strip() for s in (only or ",".join(SECTIONS)).split(",") if s.strip()]
    for s in sections:
        _check_choice(s, SECTIONS, "section")
    recall_retrievers = [r.strip() for r in retrievers.split(",") if r.strip()]
    for r in [retriever, *recall_retrievers]:
        _check_choice(r, RETRIEVERS, "retriever")
    if real is not None:
        if train_path is not None or test_path is not None:
            fail("--real builds its own task-disjoint split; drop --train/--test")
        from tauguard.classifier.real_states import real_probe_set, task_split

        train_set, test_set = task_split(real_probe_set(real), test_fraction=test_fraction, seed=seed)
    elif train_path is None or test_path is None:
        fail("give --train and --test probe files, or --real DOMAIN")
    else:
        train_set, test_set = _load(train_path), _load(test_path)
    if train_set.domain != test_set.domain:
        fail(f"train probes are {train_set.domain}, test probes {test_set.domain}; use one domain")
    from tauguard.classifier.dataset import check_disjoint

    check_disjoint(train_set.ids, test_set)
    kw: dict[str, Any] = {"retriever": retriever, "encoder": encoder, "seed": seed, "n_resamples": resamples}
    parts = [f"{test_set.domain}: train {len(train_set.examples)} probes, test {len(test_set.examples)} probes ({test_set.tasks_text()}); seed {seed}"]
    data: dict[str, Any] = {"domain": test_set.domain, "train": train_set.path, "test": test_set.path, "seed": seed}
    for section in sections:
        if section in ("table1", "representation"):
            result = ex.table1(train_set, test_set, **kw) if section == "table1" else ex.representation_ablation(train_set, test_set, **kw)
            parts.append(f"## {result.title}\n" + table(SCORE_HEADERS, [scores_rows(r.condition, r.scores) for r in result.rows], fmt.value))
            parts.append(table(DELTA_HEADERS, delta_rows(result.deltas), fmt.value))
            data[section] = {"rows": {r.condition: r.scores for r in result.rows}, "deltas": result.deltas}
        elif section == "recall":
            rows = ex.recall_table(test_set, recall_retrievers, encoder)
            parts.append(
                "## exact-match recall@k of the gold clause (query: request + evidence)\n"
                + table(
                    ["retriever", "class", "n", *(f"R@{k}" for k in ex.RECALL_KS), "median rank"],
                    [[r.retriever, r.label, r.n, *(f"{r.recall[k]:.3f}" for k in ex.RECALL_KS), r.median_rank] for r in rows],
                    fmt.value,
                )
            )
            data["recall"] = rows
        elif section == "leak":
            leak = ex.leak_check(train_set, test_set, **kw)
            parts.append(f"## {leak.table.title}\n" + table(SCORE_HEADERS, [scores_rows(r.condition, r.scores) for r in leak.table.rows], fmt.value))
            parts.append(table(DELTA_HEADERS, delta_rows(leak.table.deltas), fmt.value) + f"\n{leak.verdict}")
            data["leak"] = {"rows": {r.condition: r.scores for r in leak.table.rows}, "deltas": leak.table.deltas, "leaks": leak.leaks, "verdict": leak.verdict}
        else:
            raw, sweep = ex.injection_sweep(train_set, test_set, **kw)
            parts.append(
                f"## gold-injection sweep (gold clause for a fraction p, {retriever} top-1 otherwise); raw macro-F1 {raw.macro_f1.estimate:.3f}\n"
                + table(
                    ["p", "structured macro-F1 [95% CI]", "structured - raw [95% task CI]", "P(gap <= 0)"],
                    [[r.p, scores_rows("", r.structured)[2], delta_rows([r.gap])[0][1], f"{r.gap.p_le_zero:.3f}"] for r in sweep],
                    fmt.value,
                )
            )
            data["injection"] = {"raw": raw, "sweep": sweep}
    _emit(fmt, parts, data, train_set, test_set)


@app.command("defaults")
def defaults(
    domain: Optional[list[str]] = typer.Option(None, "--domain", "-d", help="airline and/or retail. \\[default: both]"),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="Where to write <domain>.json.gz. \\[default: the packaged data folder]"),
    retriever: str = typer.Option("bm25", "--retriever", help=RETRIEVER_HELP),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of training, folds and the bootstrap."),
    resamples: int = typer.Option(5000, "--resamples", **ranged("--resamples"), help="Task-clustered bootstrap resamples."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Train the default artifacts on real agents' decision states (every labelled write of the
    real-write benchmark), at the operating point keeping out-of-fold false holds <= 8 %,
    with provenance and metrics in the metadata."""
    from tauguard.classifier.operating import DATA_DIR, DEFAULT_DOMAINS, train_real_default
    from tauguard.classifier.render import as_json, table

    domains = domain or list(DEFAULT_DOMAINS)
    for d in domains:
        _check_choice(d, DEFAULT_DOMAINS, "domain with real states")
    rows, data = [], {}
    for d in domains:
        artifact = train_real_default(d, retriever=retriever, seed=seed, n_resamples=resamples)
        path = (out_dir or DATA_DIR) / f"{d}.json.gz"
        try:
            artifact.save(path)
        except OSError as exc:
            fail(f"cannot write {path}: {exc.strerror or exc}")
        m = artifact.meta.metrics
        rows.append(_holds_row(d, "out-of-fold, argmax", m["out_of_fold_holds_argmax"], m["out_of_fold_macro_f1_argmax"]))
        rows.append(_holds_row(d, f"out-of-fold, P(allow) >= {m['allow_threshold']:.3f}", m["out_of_fold_holds_live"], m["out_of_fold_macro_f1_live"]))
        rows.append(_holds_row(d, "in-sample (the shipped artifact)", m["in_sample_holds_live"], None))
        data[d] = {"path": str(path), "meta": artifact.meta}
    if fmt == OutputFormat.json:
        typer.echo(as_json(data))
        return
    typer.echo("real agents' writes (the real-write benchmark), not simulation\n" + table(HOLDS_HEADERS, rows, fmt.value))


HOLDS_HEADERS = ["domain", "gate", "false holds (complying held)", "catches (violating held)", "macro-F1 [95% task CI]"]


def _holds_row(domain: str, what: str, holds: dict[str, Any], f1: dict[str, float] | None) -> list[Any]:
    cell = f"{f1['estimate']:.3f} [{f1['low']:.3f}, {f1['high']:.3f}]" if f1 else ""
    return [domain, what, f"{holds['false_holds']}/{holds['complying']} = {holds['false_hold_rate']:.1%}",
            f"{holds['catches']}/{holds['violating']} = {holds['catch_rate']:.1%}", cell]


@app.command("holds")
def holds(
    domain: str = typer.Option(..., "--domain", "-d", help="airline or retail (the domains with real labelled writes)."),
    artifact_path: Optional[Path] = typer.Option(None, "--artifact", "-a", help="An artifact. \\[default: the packaged one of the domain]"),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """False holds and catches of an artifact as a live gate on every labelled real write of a
    domain (the state at the checkpoint, the retrieved clause, the artifact's operating point)."""
    from tauguard.classifier.model import load_artifact
    from tauguard.classifier.operating import DEFAULT_DOMAINS, benchmark_holds, default_artifact_path
    from tauguard.classifier.render import as_json, table

    _check_choice(domain, DEFAULT_DOMAINS, "domain with real states")
    path = artifact_path or default_artifact_path(domain)
    artifact = load_artifact(path, domain=domain)
    rates = benchmark_holds(artifact, domain)
    if fmt == OutputFormat.json:
        typer.echo(as_json({"domain": domain, "artifact": str(path), "holds": rates, "simulation": False}))
        return
    row = _holds_row(domain, str(path), rates.model_dump(), None)[:4]
    typer.echo("real agents' writes (the real-write benchmark), not simulation\n" + table(HOLDS_HEADERS[:4], [row], fmt.value))
