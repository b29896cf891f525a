"""Benchmark the classifier gate's train + eval per domain (issue 14: < 1 min on 2 cores).

For each domain with probe files ``runs/probes-<d>-train.jsonl`` and ``runs/probes-<d>-test.jsonl``
(``tauguard probes build --domain D --split train|test -o ...``), times, in this process:

- load: reading and replaying the probe prefixes into decision states (tau2 environments);
- train: the structured classifier (TF-IDF + balanced logistic regression, gold clause);
- eval: retrieved-clause predictions and scores with 2,000 task-clustered bootstrap resamples;

and reports wall and CPU seconds. tau2's import is timed once, separately. Usage:
``python bench/bench_classifier.py [--domains airline,retail,telecom] [--runs runs]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="airline,retail,telecom")
    parser.add_argument("--runs", default="runs", type=Path)
    args = parser.parse_args()

    start = _clock()
    import tauguard.tau2_adapter.compat  # noqa: F401 -- tau2 + litellm import, once per process
    from tauguard.classifier.dataset import load_probe_set
    from tauguard.classifier.experiments import evaluate
    from tauguard.classifier.model import train_artifact

    wall, cpu = _since(start)
    print(f"import tau2 + tauguard.classifier: wall {wall:.1f} s, cpu {cpu:.1f} s")
    print(f"{'domain':8} {'train':>6} {'test':>5} {'load s':>14} {'train s':>14} {'eval s':>14} {'total s':>14} macro-F1")
    for domain in args.domains.split(","):
        train_path, test_path = args.runs / f"probes-{domain}-train.jsonl", args.runs / f"probes-{domain}-test.jsonl"
        if not (train_path.exists() and test_path.exists()):
            print(f"{domain:8} (no probe files under {args.runs})")
            continue
        t0 = _clock()
        train, test = load_probe_set(train_path), load_probe_set(test_path)
        load = _since(t0)
        t1 = _clock()
        artifact = train_artifact(train, "structured", retriever="bm25", seed=0)
        fit = _since(t1)
        t2 = _clock()
        result = evaluate(artifact, test, "retrieved", n_resamples=2000, seed=0)
        ev = _since(t2)
        total = _since(t0)

        def cell(x: tuple[float, float]) -> str:
            return f"{x[0]:6.1f}/{x[1]:5.1f}cpu"

        print(
            f"{domain:8} {len(train.examples):6} {len(test.examples):5} {cell(load):>14} {cell(fit):>14} {cell(ev):>14} {cell(total):>14} "
            f"{result.scores.macro_f1.estimate:.3f}"
        )


if __name__ == "__main__":
    main()
