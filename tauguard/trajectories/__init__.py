"""Real trajectories: τ² results files imported as tauguard runs, re-scored, and audited.

- :mod:`.load`: read a τ² results file (both layouts seen in the wild) into one shape;
- :mod:`.importer`: check its tasks against τ² 26.3 and write a tauguard run;
- :mod:`.rescore`: re-evaluate the imported conversations with tauguard's evaluator;
- :mod:`.messages`: τ² message dicts as the conversation events guards see;
- :mod:`.audit`: replay each conversation and ask a strategy's gate before every write.
"""
