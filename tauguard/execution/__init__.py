"""Run execution, in τ²'s runner layers: ``plan`` (work units), ``simulate`` (one unit in a
worker process: build the agent, user and environment, run and score it), ``batch`` (schedule
units over a joblib backend, stream records to the one writer)."""
