"""Accepting an intended change: a maintainer's label turns regression rows into `accepted`.

A pull request that is slower, or compiles into more work, on purpose would otherwise fail
the required check until it is merged over it. The base branch's config names a label
(`accept_label`, default "compilegate: accept"; null turns acceptance off). When a
maintainer applies it to the pull request, and github/acceptance.py has verified that from
the event and from GitHub's own view of the pull request, `accept` here turns every
`regression` row into `accepted` (exit 0) and records who accepted it with which label.
The label followed by a colon and metric names accepts only the rows it names:
`compilegate: accept: compile_work, graph_break_sites` (a name is the row's metric, as the
verdict JSON gives it; a space reads as an underscore).

What it never does:
- read the label from the pull request's config: `accept_label` is read from the base
  side's document only (the baseline written on the default branch, or the base side of a
  paired run, which REF's config measured), so nothing the pull request writes can name a
  label of its own or turn acceptance on;
- accept anything but a regression: an `error`, `missing`, `removed` or `incomparable` row
  keeps failing the job, since the gate could not judge it and a label cannot judge it
  either;
- accept a version whose base side turned acceptance off, or names another label.

A run set applies it to each of its versions (run_set.RunSetVerdict.accepted). Pure:
documents and verdicts in, verdicts out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..config.model import DEFAULT_ACCEPT_LABEL
from ..results.model import ResultDocument
from .verdict import Acceptance, MetricVerdict, Verdict, VerdictReport

ACCEPTABLE = frozenset({Verdict.REGRESSION})


def accept_label_of(base_document: ResultDocument | None) -> str | None:
    """The label the base side's config accepts with, or None (acceptance off, or no base).

    A document from before the key reads the default at the door (results/model.py); one
    without a config block, too. A blank label (a hand-edited baseline) turns acceptance
    off, as null does."""
    if base_document is None:
        return None
    if base_document.config is None:
        return DEFAULT_ACCEPT_LABEL
    label = base_document.config.accept_label
    return label if label and label.strip() else None


def label_accepts(label: str, accept_label: str) -> bool:
    """Whether `label` is the accept label, alone or naming rows (`LABEL: metric, metric`)."""
    return label == accept_label or label.startswith(accept_label + ":")


def acceptance_for(
    accept_label: str | None, acceptances: Sequence[Acceptance]
) -> Acceptance | None:
    """The acceptance whose label is `accept_label`, alone or naming rows; None when none is
    (or acceptance is off). The applied label is what an acceptance carries, so
    `compilegate: accept: compile_work` is found for the base side's `compilegate: accept`."""
    if accept_label is None:
        return None
    return next((a for a in acceptances if label_accepts(a.label, accept_label)), None)


def named_metrics(label: str, accept_label: str) -> frozenset[str] | None:
    """The metrics `label` names after `accept_label:`; None when it is the label alone (every
    regression row)."""
    if label == accept_label:
        return None
    names = label[len(accept_label) + 1 :].split(",")
    return frozenset(n.strip().lower().replace(" ", "_") for n in names if n.strip())


def accept(
    report: VerdictReport, accept_label: str | None, acceptance: Acceptance | None
) -> VerdictReport:
    """The report with its regression rows accepted (those the label names, when it names
    some), when `acceptance` is for the label the base side names; else unchanged."""
    if acceptance is None or accept_label is None:
        return report
    if not label_accepts(acceptance.label, accept_label):
        return report
    names = named_metrics(acceptance.label, accept_label)
    if not any(_acceptable(row, names) for row in report.verdicts):
        return report
    rows = tuple(
        _accepted(row, acceptance) if _acceptable(row, names) else row for row in report.verdicts
    )
    return dataclasses.replace(report, verdicts=rows, accepted_by=acceptance)


def _acceptable(row: MetricVerdict, names: frozenset[str] | None) -> bool:
    return row.verdict in ACCEPTABLE and (names is None or row.metric in names)


def _accepted(row: MetricVerdict, acceptance: Acceptance) -> MetricVerdict:
    """The row, accepted: its facts (and a not yet moved family's message) stay the
    regression's; the report words who accepted it (report/row_words/)."""
    return dataclasses.replace(row, verdict=Verdict.ACCEPTED, accepted_by=acceptance)
