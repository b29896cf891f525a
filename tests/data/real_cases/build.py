"""Rebuild the real regression cases: whole recorded conversations of real agents.

Each file is a task subset of a public leaderboard file in ``../shared/trajectories`` (MIT,
sierra-research/tau2-bench; provenance in that folder's README), cleaned as the trajectory
fixtures are (``tests/data/trajectories/build_fixtures.py``: no policy text, a fake key). The
cases they hold, and what each guard must decide, are listed in ``tests/test_real_cases.py``
with the labelled-write id of ``tauguard/benchmark/real_writes``. Run from the repository root:

    python tests/data/real_cases/build.py /work/shared/trajectories
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "trajectories"))

import build_fixtures  # noqa: E402  (the trajectory fixtures' cleaning, reused)

CASES = {
    # task 40: passengers changed on the user's stated id, no profile read; task 27: a delay
    # certificate with no change or cancellation of the delayed reservation; task 23: a
    # cancellation whose reason is a purpose ("minimize the amount charged ..., so I prefer to
    # cancel and rebook")
    "airline_claude_cases.json.gz": ("airline_claude-opus-4-6_user-gpt-4.1.json.gz", ["40", "27", "23"]),
    # task 25: a booking "exactly the same as the one I have booked for myself"; 11: a cabin
    # change on the stated id, refunded to the method the agent named (no profile read); 33: a
    # flight change paid by a method nobody named; 8: a booking whose payment entry has no id;
    # 5: a cancellation and the delay certificate it earns, two calls of one agent message
    "airline_gptoss_cases.json.gz": ("airline_gpt-oss-120b_user-gpt-oss-120b.json.gz", ["25", "11", "33", "8", "5"]),
    # label 103: an exchange whose difference the order's original PayPal pays (no profile read);
    # label 5: an exchange to an item of the same order whose availability nobody read
    "retail_cases.json.gz": ("retail_gpt-4.1-mini_user-gpt-4.1.json.gz", ["103", "5"]),
    # clause coverage (tests/test_real_cases.py, the coverage cases): task 2, a basic economy,
    # uninsured, 2-day-old reservation cancelled with no basis
    "airline_gptoss_coverage_cases.json.gz": ("airline_gpt-oss-120b_user-gpt-oss-120b.json.gz", ["2"]),
    # task 35: an order's address modified after its items were modified
    "retail_coverage_cases.json.gz": ("retail_gpt-4.1-mini_user-gpt-4.1.json.gz", ["35"]),
}

if __name__ == "__main__":
    build_fixtures.HERE = HERE
    build_fixtures.SUBSETS = CASES
    build_fixtures.main(Path(sys.argv[1]))
