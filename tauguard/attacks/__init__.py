"""Adversarial users: attack targets (data), tactics, the sim and LLM attackers, and the
deterministic judge of attack success (the ASR@k breakdowns of a run are analysis:
:mod:`tauguard.analysis.attack_report`). ``--help``, ``show``, ``compare`` and ``check`` may import
the data parts (model, targets, tactics): they import neither tau2 nor litellm."""
