"""Test-only helpers shipped with tauguard (a blocking strategy, a loopback LLM server)."""
