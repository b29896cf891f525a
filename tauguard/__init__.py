"""tauguard: compare runtime guarding strategies for tool-calling agents on tau2-bench."""

__version__ = "0.1.0"
