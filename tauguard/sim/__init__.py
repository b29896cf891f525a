"""The built-in `sim` model: a deterministic simulated agent and user with seeded faults.

Sim runs are simulations of agent behaviour, never findings about real LLMs.
"""

SIM_MODEL = "sim"
