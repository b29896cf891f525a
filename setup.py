"""Package discovery only (metadata lives in pyproject.toml).

``strategies/`` installs as ``tauguard_strategies``: a plain ``packages.find`` cannot rename a
folder, so the package list and its directory mapping are computed here.
"""

from setuptools import find_packages, setup

STRATEGIES = "tauguard_strategies"
strategy_packages = [STRATEGIES + name[len("strategies"):] for name in find_packages(include=["strategies", "strategies.*"])]

setup(
    packages=find_packages(include=["tauguard", "tauguard.*"]) + strategy_packages,
    package_dir={STRATEGIES: "strategies"},
)
