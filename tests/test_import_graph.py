"""No new import cycle: module-level cycles of tauguard and the built-in strategies, function-level
imports included (grimp sees every import statement, wherever it is).

The layer and τ² contracts are import-linter's (``lint-imports``, pyproject.toml); import-linter has
no contract for module cycles, so this test holds the cycles that remain (issue 27). A cycle may
only shrink: a new cycle, or a module joining a listed one, fails; a listed cycle that is gone
must be removed from the list (so the list stays the truth).
"""

from __future__ import annotations

import grimp

# Each entry: the modules of one strongly connected component, as of the last measurement.
KNOWN_CYCLES: list[frozenset[str]] = []


def import_cycles() -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    graph = grimp.build_graph("tauguard", "tauguard_strategies", include_external_packages=False)
    modules = sorted(graph.modules)
    edges = {m: sorted(n for n in graph.find_modules_directly_imported_by(m) if n in graph.modules) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                succ = edges[node][i]
                if succ not in index:
                    work.append((succ, 0))
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
                continue
            for succ in edges[node]:
                if succ in on_stack:
                    low[node] = min(low[node], low[succ])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(frozenset(component))
    return components


def test_no_new_import_cycle() -> None:
    found = import_cycles()
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, f"new or grown import cycles (break them; docs/architecture.md): {new}"


def test_the_list_of_known_cycles_is_current() -> None:
    found = import_cycles()
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(c & k for c in found)]
    assert not gone, f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_a_function_level_import_is_an_edge() -> None:
    # llm_call imports provider inside a function only: grimp must still see the edge,
    # or a cycle through such an import would pass unseen
    graph = grimp.build_graph("tauguard", include_external_packages=False)
    assert "tauguard.provider" in graph.find_modules_directly_imported_by("tauguard.llm_call")
