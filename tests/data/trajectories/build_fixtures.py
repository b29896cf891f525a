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
