"""Human renderings of results and verdicts (terminal tables; markdown)."""
