"""The pull-request comment (and job summary): one markdown document for a whole run set.

    marker          <!-- compilegate: KEY --> (github/sticky_comment.py), optional
    first screen    report/first_screen/: the headline sentence, commits, torch versions,
                    runner and links, one row per version × step, every failing and
                    inconclusive row, what to do — everything before the first <details>
    details         report/details.py, one <details> per version (its variants and gate
                    rows worded once, report/version_said.py) holding a <details> for
                    each of: every variant, every gate row, graph breaks and recompiles,
                    numerics, environment, how to reproduce, and the stored runs' trend
                    (report/trend.py)
    footer          what was left out, if anything

GitHub refuses a comment over 65,536 characters. When the document is longer, sections are
dropped in DROP_ORDER (least useful first) and the footer says what went and where the
full report is (the job summary and the results artifact). The first screen is never
dropped. Every string that came from user code or torch goes through report/escape.py.
"""

from __future__ import annotations

from ..gate.run_set import RunSetVerdict
from .details import Section, version_block, version_details
from .escape import inert
from .first_screen import FirstScreen
from .links import LinkContext
from .row_words import worded_rows
from .version_said import said_version

__all__ = ["COMMENT_LIMIT_CHARS", "LinkContext", "render_comment"]

COMMENT_LIMIT_CHARS = 65_536
# Headroom for the footer and for GitHub counting characters differently from Python.
BUDGET_CHARS = COMMENT_LIMIT_CHARS - 2_000
# Which sections go first when the comment is too long.
# A version's <details> around its sections: the tags and a summary naming every kind.
VERSION_BLOCK_CHARS = 200
DROP_ORDER = ("trend", "verdicts", "environment", "numerics", "reproduce", "breaks", "table")


def render_comment(
    run_set: RunSetVerdict,
    *,
    marker: str | None = None,
    links: LinkContext | None = None,
    full_report_hint: str = "the job summary and the results artifact",
    limit_chars: int = BUDGET_CHARS,
) -> str:
    """The whole comment: the first screen, then each version's details, capped at
    `limit_chars`; `marker` (github.sticky_comment.comment_marker) first when given."""
    links = links or LinkContext()
    worded = worded_rows(run_set.versions)  # each row said once: first screen and details
    head = [*([marker] if marker else []), FirstScreen.of(run_set, links, worded).markdown()]
    sections: list[Section] = []
    for version in run_set.versions:
        said = said_version(version, run_set, worded)
        sections.extend(version_details(version, said, run_set, links))
    kept, dropped = _fit(head, sections, limit_chars, len(run_set.versions))
    parts = ["\n".join(head)]
    for version in run_set.versions:
        mine = [s for s in kept if s.version == version.label]
        if mine:
            parts.append(version_block(version.label, mine))
    if dropped:
        counts = {kind: sum(1 for s in dropped if s.kind == kind) for kind in DROP_ORDER}
        listed = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        parts.append(
            f"---\n_Shortened to stay under GitHub's {COMMENT_LIMIT_CHARS:,}-character limit: "
            f"left out {listed} section(s). The full report is in {inert(full_report_hint)}._"
        )
    return "\n\n".join(parts) + "\n"


def _fit(
    head: list[str], sections: list[Section], limit_chars: int, versions: int
) -> tuple[list[Section], list[Section]]:
    """Drop sections, least useful kind first and the last version's first, until it fits."""
    kept = list(sections)
    dropped: list[Section] = []
    # each version's own <details> and summary line
    wrappers = versions * (VERSION_BLOCK_CHARS + 4)

    def size() -> int:
        return len("\n".join(head)) + sum(len(s.text) + 2 for s in kept) + wrappers + 600

    for kind in DROP_ORDER:
        for section in reversed([s for s in kept if s.kind == kind]):
            if size() <= limit_chars:
                return kept, dropped
            kept.remove(section)
            dropped.append(section)
    return kept, dropped
