"""Guard cost of `workflow --guard-llm`: verifier calls per simulation against the loopback server.

SIMULATION: the sim agent and user run the tasks; the verifier is tauguard's scripted loopback
server (127.0.0.1), answering as an ideal verifier would (every dialogue node of the open
requests satisfied), so the count measures the firing schedule, not a model's judgement.
PolicyGuide reports 7.4-11.5 guide calls per task (shared/papers/workflow-guide_policyguide.md,
Table 14); the target is at most half of that.

    python bench/workflow_llm_calls.py --num-tasks 10 --out /tmp/wf-llm
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from tauguard.runs.store import load_run
from tauguard.testing.llm_server import ScriptedLLMServer

DIALOGUE = ("user_input", "agent_action")


def responder(body: dict[str, Any]) -> dict[str, Any]:
    """An ideal verifier: each request in the state is open with all its dialogue nodes met."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    workflow = json.loads(re.search(r"<workflow>\n(.*)\n</workflow>", system, re.S).group(1))  # type: ignore[union-attr]
    state = json.loads(re.search(r"<request_state>\n(.*)\n</request_state>", user, re.S).group(1))  # type: ignore[union-attr]
    out = []
    for req in state["requests"]:
        nodes = [n["id"] for n in workflow["nodes"] if n["id"].startswith(req["type"] + ".") and n["type"] in DIALOGUE]
        out.append({"type": req["type"], "status": req["status"], "satisfied": nodes})
    return {"content": json.dumps({"requests": out, "guidance": ""}), "usage": {"prompt_tokens": len(system + user) // 4, "completion_tokens": 60}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-tasks", type=int, default=10)
    parser.add_argument("--domains", default="airline,retail,telecom")
    parser.add_argument("--out", type=Path, default=Path("/tmp/wf-llm"))
    args = parser.parse_args()
    run_dir = args.out / "workflow-llm"
    shutil.rmtree(run_dir, ignore_errors=True)  # the bench's own run folder: a re-run starts afresh
    with ScriptedLLMServer(responder) as server:
        llm_args = json.dumps({"guard": {"api_base": server.api_base, "max_retries": 0}})
        cmd = [sys.executable, "-m", "tauguard", "run", "--strategy", "workflow", "--domain", args.domains, "-k", "1",
               "--num-tasks", str(args.num_tasks), "--guard-llm", "openai/verifier", "--llm-args", llm_args,
               "--workers", "1", "--backend", "threading", "--name", "workflow-llm", "--out", str(args.out), "--plain"]
        # a placeholder key for the loopback server (the run refuses keys in --llm-args)
        env = {**os.environ, "OPENAI_API_KEY": "sk-loopback-placeholder"}
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    calls: dict[str, list[int]] = {}
    passed = 0
    # Through tauguard's loader: stored lines leave fields at their default out (a guard with no
    # call has no "calls" key), which the models fill back in.
    rows = load_run(run_dir, conversations=False).records
    for rec in rows:
        usage = rec.usage.get("guard")
        calls.setdefault(rec.domain, []).append(usage.calls if usage is not None else 0)
        passed += bool(rec.success)
    print("SIMULATION (sim agent and user; loopback verifier)")
    for domain, values in sorted(calls.items()):
        print(f"{domain}: {len(values)} simulations, verifier calls per simulation mean {statistics.mean(values):.2f} "
              f"(min {min(values)}, max {max(values)})")
    print(f"passed {passed}/{len(rows)}")


if __name__ == "__main__":
    main()
