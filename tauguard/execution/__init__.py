"""Run execution, in τ²'s runner layers: ``lifecycle`` (the library's ``plan`` / ``run`` /
``resume``), ``checks`` (every input checked before work), ``manifest`` (a new run's identity),
``plan`` (work units), ``simulate`` (one unit in a worker process: build the agent, user and
environment, run and score it), ``batch`` (schedule units over a joblib backend, stream
records to the one writer) and ``processes`` (signals, worker lifetime, joblib's shm)."""
