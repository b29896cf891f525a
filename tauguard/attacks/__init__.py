"""Adversarial users: attack targets (data), tactics, the sim and LLM attackers, and the
deterministic judge of attack success. ``--help``, ``show``, ``compare`` and ``check`` may import
the data parts (model, targets, tactics): they import neither tau2 nor litellm."""
