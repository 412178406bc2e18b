"""An acceptance in words (gate/acceptance.py): who accepted, with which label, at which
commit — in an accepted row, the headline and the CLI's lines."""

from __future__ import annotations

from ..gate.verdict import Acceptance


def acceptance_words(acceptance: Acceptance) -> str:
    """`@maintainer (label "compilegate: accept") at 0123456789ab`."""
    words = f'@{acceptance.login} (label "{acceptance.label}")'
    return f"{words} at {acceptance.commit[:12]}" if acceptance.commit else words
