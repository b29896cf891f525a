"""Workflow graphs: schema, loader (subflows inlined at load time) and structural validation.

After PolicyGuide (``shared/papers/workflow-guide_policyguide.md`` §3): node types entry, exit,
agent_action, user_input, tool_call (read), tool_authorization (write), decision and subflow;
"each node specification names its actor and expected action and states an explicit
satisfying condition"; "subflows are inlined at load time, so the runtime traverses one flat
graph per domain"; "a mutating tool call is enabled at its authorization node". One TOML file
per domain in ``graphs/``; every node cites clause ids. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import tomllib
from collections import deque
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tauguard.domains.consistency import ContractError, check_confirmation, check_entity_read, check_scope, check_write
from tauguard.errors import TauguardInputError

GRAPH_DIR = Path(__file__).parent / "graphs"
NodeType = Literal["entry", "exit", "agent_action", "user_input", "tool_call", "tool_authorization", "decision", "subflow"]
Actor = Literal["agent", "user", "system", "tool"]
# Deterministic dialogue judges (sim mode; the LLM verifier judges the same nodes with --guard-llm).
Judge = Literal["request", "confirm", "reason", "device_report", "refusal", "payment"]
MAX_DEPTH = 6  # nested subflows (service ⊂ data ⊂ MMS needs 3)


class GraphError(TauguardInputError):
    """A workflow file that does not load or validate."""


class ReadMatch(BaseModel):
    """A read must observe the write's target: ``read(read=<write's argument write>)``."""

    model_config = ConfigDict(extra="forbid")

    write: str
    read: str


class Node(BaseModel):
    """One workflow node."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_.]+$")
    type: NodeType
    actor: Actor
    action: str = Field(min_length=3)  # the expected action
    satisfied: str = Field(min_length=3)  # the satisfying condition
    clauses: list[str] = Field(min_length=1)
    tool: str | None = None  # tool_call / tool_authorization
    alternatives: list[str] = Field(default_factory=list)  # other tools that satisfy a tool_call
    match: ReadMatch | None = None
    judge: Judge | None = None
    tools: list[str] = Field(default_factory=list)  # device tools a device_report node observes
    subflow: str | None = None
    # A decision node decided from tool results (and the dialogue judge): action-guard checklist
    # item ids of the write the node gates, whose deterministic checks are the one implementation
    # of each rule; the guide holds the write until every one is met (:mod:`.decisions`).
    checks: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fields_of_type(self) -> Node:
        if self.type in ("tool_call", "tool_authorization") and not self.tool:
            raise ValueError(f"node {self.id}: a {self.type} node names its tool")
        if self.type == "subflow" and not self.subflow:
            raise ValueError(f"node {self.id}: a subflow node names its subflow")
        if self.checks and self.type != "decision":
            raise ValueError(f"node {self.id}: only a decision node names checks")
        if self.judge == "device_report" and not self.tools:
            raise ValueError(f"node {self.id}: a device_report node lists the device tools it observes")
        return self

    @property
    def read_tools(self) -> list[str]:
        """The tools whose successful call satisfies a tool_call node."""
        return [self.tool, *self.alternatives] if self.tool else []


class Edge(BaseModel):
    """A transition, with its condition ("" = unconditional)."""

    source: str
    target: str
    condition: str = ""


def _edges(value: object) -> object:
    if isinstance(value, list):
        return [
            {"source": e[0], "target": e[1], "condition": e[2] if len(e) > 2 else ""} if isinstance(e, list) else e
            for e in value
        ]
    return value


class Subflow(BaseModel):
    """A reusable procedure; a main-graph subflow with ``triggers`` is a request type."""

    model_config = ConfigDict(extra="forbid")

    entry: str
    exit: str
    triggers: list[str] = Field(default_factory=list)  # words of a user message that open the request
    nodes: list[Node]
    edges: list[Edge] = Field(default_factory=list)

    _split = field_validator("edges", mode="before")(classmethod(lambda cls, v: _edges(v)))


class WorkflowFile(BaseModel):
    """One domain's workflow file as written (before inlining)."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    entry: str
    nodes: list[Node]
    edges: list[Edge]
    subflow: dict[str, Subflow] = Field(default_factory=dict)

    _split = field_validator("edges", mode="before")(classmethod(lambda cls, v: _edges(v)))

    def clause_ids(self) -> set[str]:
        """Every clause id the file cites, subflow-invoking nodes included (they vanish when inlined)."""
        nodes = [*self.nodes, *(n for sub in self.subflow.values() for n in sub.nodes)]
        return {c for n in nodes for c in n.clauses}


class Request(BaseModel):
    """A request type: a main-graph subflow node with its trigger words."""

    id: str
    triggers: list[str]
    tools: list[str]  # write tools authorized inside it
    exit: str  # flat id of its exit node


class FlatGraph(BaseModel):
    """The flat graph the runtime traverses (ids of inlined nodes are ``<subflow node>.<node>``)."""

    domain: str
    entry: str
    nodes: dict[str, Node]
    edges: list[Edge]
    requests: list[Request]

    def successors(self, node_id: str) -> list[str]:
        """Targets of a node's edges."""
        return [e.target for e in self.edges if e.source == node_id]

    def predecessors(self, node_id: str) -> list[str]:
        """Sources of the edges into a node."""
        return [e.source for e in self.edges if e.target == node_id]

    def reachable(self) -> set[str]:
        """Nodes reachable from the entry."""
        seen, todo = {self.entry}, deque([self.entry])
        while todo:
            for nxt in self.successors(todo.popleft()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def authorizations(self, tool: str) -> list[str]:
        """Ids of the authorization nodes of a write tool."""
        return [n.id for n in self.nodes.values() if n.type == "tool_authorization" and n.tool == tool]

    def prerequisites(self, node_id: str) -> list[str]:
        """The node's ancestors inside its own subflow instance (same id prefix), in path order.

        A write is authorized by the steps of its own procedure (locate, check, confirm); the
        shared identification is checked separately, once per conversation.
        """
        prefix = node_id.rsplit(".", 1)[0] + "." if "." in node_id else ""
        order: list[str] = []
        seen: set[str] = set()

        def visit(nid: str) -> None:
            for pred in self.predecessors(nid):
                if pred in seen or not pred.startswith(prefix):
                    continue
                seen.add(pred)
                visit(pred)
                order.append(pred)

        visit(node_id)
        return order

    def request_of(self, node_id: str) -> Request | None:
        """The request type a flat node belongs to."""
        head = node_id.split(".", 1)[0]
        return next((r for r in self.requests if r.id == head), None)


def _inline(
    file: WorkflowFile, nodes: list[Node], edges: list[Edge], prefix: str, depth: int
) -> tuple[dict[str, Node], list[Edge], dict[str, tuple[str, str]]]:
    """Flatten ``nodes``/``edges`` under ``prefix``; returns nodes, edges and each subflow node's (entry, exit)."""
    if depth > MAX_DEPTH:
        raise GraphError(f"{file.domain}: subflows nested deeper than {MAX_DEPTH} (a cycle?) at {prefix}")
    flat: dict[str, Node] = {}
    out_edges: list[Edge] = []
    ends: dict[str, tuple[str, str]] = {}
    for node in nodes:
        fid = prefix + node.id
        if node.type != "subflow":
            flat[fid] = node.model_copy(update={"id": fid})
            ends[node.id] = (fid, fid)
            continue
        assert node.subflow is not None
        sub = file.subflow.get(node.subflow)
        if sub is None:
            raise GraphError(f"{file.domain}: node {fid} invokes unknown subflow '{node.subflow}'")
        inner_nodes, inner_edges, inner_ends = _inline(file, sub.nodes, sub.edges, fid + ".", depth + 1)
        for key in (sub.entry, sub.exit):
            if key not in inner_ends:
                raise GraphError(f"{file.domain}: subflow '{node.subflow}' entry/exit '{key}' is not one of its nodes")
        flat.update(inner_nodes)
        out_edges += inner_edges
        ends[node.id] = (inner_ends[sub.entry][0], inner_ends[sub.exit][1])
    for edge in edges:
        if edge.source not in ends or edge.target not in ends:
            raise GraphError(f"{file.domain}: edge {prefix}{edge.source} -> {prefix}{edge.target} names an unknown node")
        out_edges.append(Edge(source=ends[edge.source][1], target=ends[edge.target][0], condition=edge.condition))
    return flat, out_edges, ends


def flatten(file: WorkflowFile) -> FlatGraph:
    """Inline every subflow; collect the request types (main-graph subflows with triggers)."""
    nodes, edges, ends = _inline(file, file.nodes, file.edges, "", 0)
    if file.entry not in ends:
        raise GraphError(f"{file.domain}: entry '{file.entry}' is not a node")
    requests = []
    for node in file.nodes:
        sub = file.subflow.get(node.subflow or "")
        if node.type == "subflow" and sub is not None and sub.triggers:
            tools = sorted({n.tool for nid, n in nodes.items() if nid.startswith(node.id + ".") and n.type == "tool_authorization" and n.tool})
            requests.append(Request(id=node.id, triggers=[t.lower() for t in sub.triggers], tools=tools, exit=ends[node.id][1]))
    return FlatGraph(domain=file.domain, entry=ends[file.entry][0], nodes=nodes, edges=edges, requests=requests)


def domains() -> list[str]:
    """Domains with a workflow file."""
    return sorted(p.stem for p in GRAPH_DIR.glob("*.toml"))


def read_file(domain: str) -> WorkflowFile:
    """The validated workflow file of ``domain`` (GraphError when missing or invalid)."""
    path = GRAPH_DIR / f"{domain}.toml"
    if not path.exists():
        raise GraphError(f"no workflow graph for domain '{domain}'; available: {', '.join(domains())}")
    with path.open("rb") as fh:
        try:
            wf = WorkflowFile.model_validate(tomllib.load(fh))
        except ValueError as exc:
            raise GraphError(f"{path.name}: {exc}") from exc
    if wf.domain != domain:
        raise GraphError(f"{path.name}: declares domain '{wf.domain}'")
    return wf


@cache
def load(domain: str) -> FlatGraph:
    """The flat workflow graph of ``domain``, checked against the domain's write contract."""
    graph = flatten(read_file(domain))
    try:
        check_contract(graph)
    except ContractError as exc:
        raise GraphError(f"{domain}.toml: {exc}") from None
    return graph


def check_contract(graph: FlatGraph) -> None:
    """Each request's writes, confirm steps, target reads and clause citations agree with the
    write contract (ContractError naming the node and the contradiction)."""
    domain = graph.domain
    all_tools = [r for req in graph.requests for r in req.tools]
    # A node of a shared subflow (the order look-up, the confirmation) serves every request that
    # inlines it: its citations are in scope when they constrain the writes of any of them.
    serving: dict[str, set[str]] = {}
    for request in graph.requests:
        for nid in graph.nodes:
            if nid.startswith(request.id + "."):
                serving.setdefault(nid.split(".", 1)[1], set()).update(request.tools)
    for nid, node in graph.nodes.items():
        owner = graph.request_of(nid)
        tools = sorted(serving.get(nid.split(".", 1)[1], set())) if owner is not None else all_tools
        for cid in node.clauses:
            check_scope(domain, tools, cid, f"workflow node {nid}")
        if node.match is not None and node.tool is not None:
            check_entity_read(domain, node.match.write, node.tool, f"workflow node {nid}", read_argument=node.match.read)
        if node.checks:
            # a decision of a subflow several requests inline (the line look-up) names the items
            # of each of their writes; at run time only the proposed write's items apply
            check_decision(domain, all_tools, node)
    for nid, node in graph.nodes.items():
        if node.type != "tool_authorization" or node.tool is None:
            continue
        # the confirm steps of this write's own procedure (what authorizes it at run time)
        confirms = [graph.nodes[p] for p in graph.prerequisites(nid) if graph.nodes[p].judge == "confirm"]
        where = f"workflow node {nid}"
        check_write(domain, node.tool, where)
        check_confirmation(domain, node.tool, bool(confirms), [c for n in confirms for c in n.clauses], where)


def check_decision(domain: str, tools: list[str], node: Node) -> None:
    """A decision node's checks are deterministic checklist items of the writes it gates."""
    from tauguard_strategies.action_guard.schema import domain_checklists

    checklists = domain_checklists(domain)
    for item_id in node.checks:
        item = next((i for t in tools if t in checklists for i in checklists[t].items if i.id == item_id), None)
        if item is None:
            raise ContractError(f"workflow node {node.id}: check {item_id} is no checklist item of {', '.join(tools)}")
        if item.check is None:
            raise ContractError(f"workflow node {node.id}: checklist item {item_id} has no deterministic check")


def problems(graph: FlatGraph, write_tools: list[str], clause_ids: set[str]) -> list[str]:
    """Structural problems: unreachable nodes, no exit reachable, write tools without an
    authorization node, unknown clause ids (empty list = valid)."""
    out = []
    reach = graph.reachable()
    out += [f"node {n} is not reachable from {graph.entry}" for n in graph.nodes if n not in reach]
    if not any(graph.nodes[n].type == "exit" for n in reach):
        out.append("no exit node is reachable")
    out += [f"write tool {t} has no tool_authorization node" for t in write_tools if not graph.authorizations(t)]
    for node in graph.nodes.values():
        out += [f"node {node.id} cites unknown clause {c}" for c in node.clauses if c not in clause_ids]
    return out
