"""The measuring interpreter: standard library + torch only (see the package docstring)."""
