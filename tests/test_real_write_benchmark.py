"""The labelled real-write benchmark (tauguard/benchmark/real_writes): valid, complete, consistent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard import domains
from tauguard.benchmark.real_writes import DATA_DIR, load_labels, unlabelled_writes
from tauguard.domains.contract import write_tools
from tauguard.testing.shared_data import shared_trajectories



def test_every_label_is_complete_and_cites_known_clauses() -> None:
    labels = load_labels()
    assert len(labels) == 530 and len({w.id for w in labels}) == 530
    for w in labels:
        assert w.label in ("complies", "violates", "ambiguous") and w.why and w.labeller, w.id
        assert w.clauses or w.label == "ambiguous", w.id
        for cid in w.clauses:
            assert domains.clause(cid).id.startswith(w.domain + "."), (w.id, cid)
        assert w.write.name in write_tools(w.domain), w.id
    # a violation cites at least one clause that constrains the write (or constrains no write at all:
    # a conduct rule); the first clause is the labeller's main one and may come from another
    # write's section (an address change after an item change breaks retail.modify_items_once)
    for w in labels:
        if w.label == "violates":
            scopes = [domains.clause(c).tools for c in w.clauses]
            assert any(not s or w.write.name in s for s in scopes), (w.id, w.clauses)


def test_a_bad_line_names_its_file_and_line(tmp_path: Path) -> None:
    good = next(iter(sorted(DATA_DIR.glob("*.jsonl")))).read_text().splitlines()[0]
    path = tmp_path / "x.jsonl"
    path.write_text(good + "\n" + good.replace('"label":"', '"label":"maybe', 1) + "\n")
    with pytest.raises(ValueError, match=r"x.jsonl:2: "):
        load_labels([path])


def test_the_benchmark_covers_every_write_of_every_shared_file() -> None:
    labelled = {w.id: w for w in load_labels()}
    for path in sorted(shared_trajectories().glob("*.json.gz")):
        if "unlabelled" in path.name:  # the same conversations as the relabelled retail file
            continue
        domain = path.name.split("_")[0]
        for w in unlabelled_writes(path, domain, set(write_tools(domain))):
            assert w.id in labelled, w.id
            assert labelled[w.id].write == w.write and labelled[w.id].source == w.source, w.id
