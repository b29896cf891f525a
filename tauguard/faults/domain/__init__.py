"""Domain fault generators (airline, retail, telecom), registered on import.

Each generator reads the environment's database just before the gold write (never
changing it) and returns a faulty call that tau2's tool accepts syntactically: it names
real entities and satisfies the tool's own checks, unless the catalog entry declares the
tool error that tau2 raises for that very violation (``tool_error``).
"""
