"""The τ² adapter: the only package that imports ``tau2`` (its accessors, copy-on-write
environments, scoring and offline replay). Importing the package itself loads nothing of τ².
"""
