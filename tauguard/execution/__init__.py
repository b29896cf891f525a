"""Run execution, in τ²'s runner layers: ``lifecycle`` (the library's ``plan`` / ``run`` /
``resume``), ``checks`` (every input checked before work), ``manifest`` (a new run's identity),
``plan`` (work units), ``batch`` (the run's one writer: pending units in, records to disk),
``driver`` (the one driver: units into jobs, jobs onto an engine, records back), ``job`` (the
one job type, and how a worker runs it: units in turn or on threads), ``engines`` (this
process, forked workers, a loky pool, Ray, Dask), ``simulate`` (one unit: build the agent,
user and environment, run and score it) and ``processes`` (signals, worker lifetime, joblib's
shm).

Dependencies point one way: ``lifecycle`` → ``batch`` → ``driver`` → ``engines`` → ``job`` →
``simulate``; every module may use ``config`` and ``plan``, and nothing imports back up.
"""
