"""`tauguard workflow show --domain D`: the `workflow` strategy's graph (a table, Mermaid or JSON)."""

from __future__ import annotations

import json
from enum import Enum

import typer

from tauguard.cli.common import domain_choices, fail

app = typer.Typer(help="Workflow graphs of the `workflow` strategy (see docs/workflow.md).", no_args_is_help=True, add_completion=False)


class GraphFormat(str, Enum):
    """Output formats of `workflow show` (a table by default, like every other command)."""

    table = "table"
    mermaid = "mermaid"
    json = "json"


_SHAPES = {
    "entry": ("([", "])"), "exit": ("([", "])"), "decision": ("{", "}"), "tool_call": ("[(", ")]"),
    "tool_authorization": ("[[", "]]"), "user_input": ("[/", "/]"), "agent_action": ("[", "]"),
}


def _label(text: str) -> str:
    return text.replace('"', "'")


def mermaid(graph: object) -> str:
    """The flat graph as a Mermaid flowchart (renders on GitHub)."""
    from tauguard_strategies.workflow.graph import FlatGraph

    assert isinstance(graph, FlatGraph)
    ids = {nid: f"n{i}" for i, nid in enumerate(graph.nodes)}
    lines = ["flowchart TD"]
    for nid, node in graph.nodes.items():
        left, right = _SHAPES.get(node.type, ("[", "]"))
        what = node.tool or node.action
        lines.append(f'  {ids[nid]}{left}"{_label(nid)}<br/>{node.type}: {_label(what)}"{right}')
    for edge in graph.edges:
        cond = f'|"{_label(edge.condition)}"|' if edge.condition else ""
        lines.append(f"  {ids[edge.source]} -->{cond} {ids[edge.target]}")
    return "\n".join(lines)


@app.command("show")
def show(
    domain: str = typer.Option(..., "--domain", "-d", help=f"{domain_choices()}."),
    fmt: GraphFormat = typer.Option(GraphFormat.table, "--format", help="table, mermaid (renders on GitHub) or json"),
) -> None:
    """Print a domain's workflow graph with its subflows inlined."""
    from tauguard_strategies.workflow.graph import GraphError, domains, load

    if domain not in domains():
        fail(f"unknown domain '{domain}'; allowed: {', '.join(domains())}")
    try:
        graph = load(domain)
    except GraphError as exc:
        fail(str(exc))
    if fmt == GraphFormat.json:
        typer.echo(json.dumps(graph.model_dump(mode="json", exclude_none=True), indent=2))
    elif fmt == GraphFormat.mermaid:
        typer.echo(mermaid(graph))
    else:
        from tauguard.tables import fit_table

        rows = [
            {"node": n.id, "type": n.type, "actor": n.actor, "action": n.tool or n.action, "clauses": ", ".join(n.clauses)}
            for n in graph.nodes.values()
        ]
        typer.echo(fit_table(rows, headers="keys", tablefmt="simple"))
        requests = [f"{r.id} ({', '.join(r.tools)})" for r in graph.requests]
        typer.echo("\nrequests: " + "; ".join(requests))
