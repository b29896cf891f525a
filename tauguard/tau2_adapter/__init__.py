"""The τ² adapter: the only package that imports ``tau2`` (its accessors, copy-on-write
environments, scoring and the offline-replay primitives; replaying a sim plan with them is
:mod:`tauguard.sim.plan_replay`). Importing the package itself loads nothing of τ².
"""
