"""Real trajectories: τ² results files imported as tauguard runs, re-scored, and audited.

- :mod:`.load`: read a τ² results file (both layouts seen in the wild) into one shape;
- :mod:`.labels`: check that each simulation was scored against the task its label names;
- :mod:`.importer`: check tasks against τ² 26.3 and write a tauguard run;
- :mod:`.replayer`: replay a recorded conversation in τ²'s environment, checking each result;
- :mod:`.rescore`: re-evaluate the imported conversations with tauguard's evaluator;
- :mod:`.audit` (+ :mod:`.render`): ask strategies' gates before every recorded write;
- :mod:`.probes`: pre-action states of recorded writes as gate probes.
"""
