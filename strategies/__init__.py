"""Built-in guarding strategies, one module or package each (see tauguard.strategy_api.registry)."""
