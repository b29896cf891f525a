"""τ²'s agent base class, for the classes that subclass it (the guarded agent).

A module of its own because importing ``tau2.agent`` loads litellm (~5 s): only the paths that
run conversations import it, never ``compat`` (which the fast commands import).
"""

from __future__ import annotations

from tau2.agent.base import BaseAgent

__all__ = ["BaseAgent"]
