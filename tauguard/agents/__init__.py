"""Agents and users tauguard puts into tau2's orchestrator (imported in workers only)."""
