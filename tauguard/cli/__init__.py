"""tauguard's command-line interface: one module per command, registered in main."""
