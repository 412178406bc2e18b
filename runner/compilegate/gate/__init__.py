"""The regression gate: documents, baseline, policy, one-pass comparison, one judge per
metric family (judges/), verdicts."""
