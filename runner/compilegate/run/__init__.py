"""Parent side of a run: static entry check, child launcher, orchestration."""
