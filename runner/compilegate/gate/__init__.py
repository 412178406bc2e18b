"""The regression gate: documents, baseline, comparison, per-metric rules, verdicts."""
