"""An acceptance in words (gate/acceptance.py): who accepted, with which label, at which
commit — in an accepted row, the headline and the CLI's lines."""

from __future__ import annotations

from ..gate.verdict import Acceptance


def acceptance_words(acceptance: Acceptance) -> str:
    """`@maintainer (label "compilegate: accept") at 0123456789ab`."""
    words = f'@{acceptance.login} (label "{acceptance.label}")'
    return f"{words} at {acceptance.commit[:12]}" if acceptance.commit else words


def rehearsed_acceptance_line(
    label: str,
    acceptance: Acceptance | None,
    why_not: str | None,
    *,
    verdict_before: str,
    verdict_after: str,
    exit_before: int,
    exit_after: int,
) -> str:
    """What `publish --dry-run` says the real check would decide for `label`: the same
    decision, and the same reason, the real publish prints."""
    if acceptance is None:
        return (
            f'"{label}" would accept nothing: {why_not}; the verdict stays {verdict_before} '
            f"(exit {exit_before})"
        )
    return (
        f"regressions would be accepted by {acceptance_words(acceptance)}: the verdict "
        f"{verdict_before} → {verdict_after} (exit {exit_before} → {exit_after}); "
        f'"{label}: METRIC, …" accepts only the rows it names'
    )


def labeller_trust_line(login: str) -> str:
    """What the real check takes from the event without asking GitHub (docs/security.md)."""
    return (
        f"taken from the event, as the real publish does: @{login} applied the label (GitHub "
        "lets only people with triage rights or more apply one; their permission is not "
        "asked)"
    )
