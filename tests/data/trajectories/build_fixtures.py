"""Rebuild the small τ² results files the trajectory tests read.

They are task subsets of the public leaderboard files in ``../shared/trajectories`` (MIT,
sierra-research/tau2-bench; see that folder's README), with the policy text and user
guidelines dropped from ``info`` and every ``llm_args`` replaced by a placeholder holding a
fake ``api_key`` (the import must redact it). Run from the repository root:

    python tests/data/trajectories/build_fixtures.py /work/shared/trajectories
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE_KEY = "sk-fixture-NOT-A-REAL-KEY-0123456789"

SUBSETS = {
    # passed with gold writes (17), failed with an off-gold write (18), passed with no write (46)
    "airline_claude_subset.json.gz": ("airline_claude-opus-4-6_user-gpt-4.1.json.gz", ["17", "18", "46"]),
    # task 8: a recorded tool error whose text names pydantic 2.12 (replays with the local version)
    "airline_gptoss_subset.json.gz": ("airline_gpt-oss-120b_user-gpt-oss-120b.json.gz", ["8", "17"]),
    # labels "0" and "1" hold the conversations of retail tasks 89 and 81
    "retail_mislabelled_subset.json.gz": ("retail_gpt-4.1-mini_user-gpt-4.1.json.gz", ["0", "1"]),
}


def _clean_info(info: dict) -> dict:
    info = json.loads(json.dumps(info))
    for role in ("agent_info", "user_info"):
        part = info.get(role) or {}
        part.pop("global_simulation_guidelines", None)
        part["llm_args"] = {"temperature": 0.0, "api_key": FAKE_KEY}
    env = info.get("environment_info") or {}
    env.pop("policy", None)
    env.pop("tool_defs", None)
    return info


# Archives of other shapes: (source, positions or labels, how the top level is written).
SHAPES = {
    # no task_id/trial at all; #0: task 89 (unique gold), #28/#49: 41/42 told apart by the
    # scenario, #11/#34: 96/97 (shared gold, the scenario does not tell them apart)
    "retail_unlabelled_subset.json.gz": ("retail_toolorchestra_original-unlabelled.json.gz", [0, 28, 49, 11, 34], "tau2"),
    # a bare list run on a later task release: label 7 (failed) was scored against another
    # version of task 7; label 15 is sonnet's, label 0 opus's (models only in raw_data)
    "airline_adaptive_subset.json.gz": ("airline_adaptive-agent_opus46_tau3tasks.json.gz", ["7", "15", "0"], "list"),
    # its own top level {domain, agent, model, ...}; label 7: an infrastructure error, no reward;
    # label 2: another task version; label 3: deepseek-chat, unique gold
    "airline_cascata_subset.json.gz": ("airline_adaptive-agent_cascata_tau3tasks.json.gz", ["7", "2", "3"], "own"),
}
# Synthetic 4-trial archives built from real conversations of airline tasks 17, 18 and 46:
# trial k of each task is the conversation of source k (ironshell has no 46: claude's again).
TRIALS = ("airline_claude-opus-4-6_user-gpt-4.1.json.gz", "airline_gpt-oss-120b_user-gpt-oss-120b.json.gz",
          "airline_ironshell_opus46_run1.json.gz", "airline_gpt-oss-120b_user-gpt-oss-120b.json.gz")
_KEEP = ("role", "content", "tool_calls", "turn_idx", "requestor", "id", "name", "arguments", "error", "usage", "cost")


def _slim(message: dict) -> dict:
    out = {k: v for k, v in message.items() if k in _KEEP}
    if isinstance(message.get("raw_data"), dict) and message["raw_data"].get("model"):
        out["raw_data"] = {"model": message["raw_data"]["model"]}  # what the importer reads models from
    if isinstance(message.get("tool_messages"), list):
        out["tool_messages"] = [_slim(m) for m in message["tool_messages"]]
    return out


def _sim_keys(sim: dict, keep_ids: bool) -> dict:
    wanted = ("id", "task_id", "trial", "seed", "reward_info", "messages", "termination_reason", "duration",
              "agent_cost", "user_cost", "start_time", "end_time", "timestamp")
    out = {k: sim[k] for k in wanted if k in sim and (keep_ids or k not in ("task_id", "trial"))}
    out["messages"] = [_slim(m) for m in sim["messages"]]
    return out


def shapes(source: Path) -> None:
    for out, (name, picks, layout) in SHAPES.items():
        data = json.loads(gzip.decompress((source / name).read_bytes()))
        sims = data if isinstance(data, list) else data["simulations"]
        if isinstance(picks[0], int):
            chosen = [_sim_keys(sims[i], keep_ids=False) for i in picks]
        else:
            chosen = [_sim_keys(s, keep_ids=True) for p in picks for s in sims if s.get("task_id") == p]
        if layout == "list":
            payload: object = chosen
        elif layout == "own":
            payload = {k: v for k, v in data.items() if k != "simulations"} | {"simulations": chosen}
        else:
            payload = {"timestamp": data.get("timestamp"), "info": _clean_info(data["info"]), "tasks": [], "simulations": chosen}
        (HERE / out).write_bytes(gzip.compress(json.dumps(payload).encode(), mtime=0))
        print(out, len(chosen), "simulations", (HERE / out).stat().st_size, "bytes")
    files = [json.loads(gzip.decompress((source / name).read_bytes())) for name in TRIALS]
    for out, sources in (("airline_4trials_synthetic.json.gz", files), ("airline_claude_4trials_synthetic.json.gz", [files[0]] * 4)):
        sims = []
        for task_id in ("17", "18", "46"):
            for trial, data in enumerate(sources):
                found = [s for s in data["simulations"] if s["task_id"] == task_id] or [
                    s for s in files[0]["simulations"] if s["task_id"] == task_id
                ]
                sims.append({**_sim_keys(found[0], keep_ids=True), "trial": trial})
        info = _clean_info(files[0]["info"]) | {"num_trials": 4}
        payload = {"timestamp": files[0].get("timestamp"), "info": info, "tasks": [], "simulations": sims}
        (HERE / out).write_bytes(gzip.compress(json.dumps(payload).encode(), mtime=0))
        print(out, len(sims), "simulations", (HERE / out).stat().st_size, "bytes")


def main(source: Path) -> None:
    for out, (name, ids) in SUBSETS.items():
        data = json.loads(gzip.decompress((source / name).read_bytes()))
        sims = [s for s in data["simulations"] if s["task_id"] in ids]
        for sim in sims:
            for message in sim["messages"]:
                message.pop("raw_data", None)
        wanted = set(ids)
        for sim in sims:  # the tasks the simulations really ran on, for the mislabelled file
            for check in (sim.get("reward_info") or {}).get("action_checks") or []:
                wanted.add(check["action"]["action_id"].rsplit("_", 1)[0])
        tasks = [t for t in data["tasks"] if t["id"] in wanted]
        payload = {"timestamp": data.get("timestamp"), "info": _clean_info(data["info"]), "tasks": tasks, "simulations": sims}
        (HERE / out).write_bytes(gzip.compress(json.dumps(payload).encode(), mtime=0))
        print(out, len(sims), "simulations", (HERE / out).stat().st_size, "bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
    shapes(Path(sys.argv[1]))
