"""The result document: assembly, statistics, recommendation."""
