"""The headline: one sentence naming what failed and where, and what did not move.

    fails on compile time only in transformer on torch 2.4.1; step speed, graph breaks,
    recompiles, numerics unchanged

Rows are grouped into the families a reader thinks in (wording.FAMILIES): step speed,
compile time, compile work, graph breaks, recompiles, numerics, memory; a step or variant
that failed to run, could not be compared, or is gone has its own words. Compile work (torch's
counts: graphs, FX nodes, guards, kernels) is named on its own when it fails or is unclear,
since its fix differs from a slow compile's; when it holds, it is part of "compile time".
A family is named failing only for what failed in it: fallbacks to eager without a new
graph-break site are "fallbacks to eager", not "graph breaks".

When the failing kinds failed on different torch versions, each says its own:

    fails in gpt: step speed and graph breaks on torch 2.9.1 and 2.10.0, compile work on
    torch 2.10.0 only; compile time, recompiles, numerics, memory unchanged
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import MetricVerdict
from . import wording as w
from .acceptance_words import acceptance_words
from .row_words import worded_rows
from .row_words.moved_counts import MovedCount, MovedWithinTolerance
from .row_words.numerics_reference import UNREFERENCED, WithoutReference
from .row_words.worded import WordedRow, WordedRows
from .wording import and_list as _and
from .wording import plain_torch as _plain_torch


def headline_of(run_set: RunSetVerdict, worded: WordedRows | None = None) -> tuple[str, str]:
    """(icon, `fails on compile time only (…); step speed, graph breaks, numerics unchanged`);
    `worded`: what report/ says of each row (row_words.worded_rows), made here if not given."""
    versions = run_set.versions
    if not versions:
        return w.FAIL_ICON, "fails: no result to report"
    broken = [v for v in versions if v.document is None or v.overall == "error"]
    judged = [v for v in versions if v.verdict is not None]
    if not judged:
        if broken:
            return w.FAIL_ICON, f"fails: the run failed on {torch_list(broken)}"
        return "", f"measured only, no baseline to compare with ({torch_list(versions)})"
    by_family: dict[str, dict[str, set[str]]] = {}
    rows_said = _worded(judged, worded or worded_rows(run_set.versions))
    moved = _moved_counts(rows_said)
    unreferenced = _unreferenced(judged, rows_said)
    for version, rows in zip(judged, rows_said, strict=True):
        for row, row_said in rows:
            if not w.gated(row):
                continue  # reported beside the others, never judged: it decides nothing
            if row_said.look is not None:
                # a count that moved is never "unchanged": said in `moved`; a weakened
                # check neither: said in `unreferenced`
                continue
            name = w.row_family(row)
            if row.verdict in w.FAILING and row.metric in w.NAMED_WHEN_ALONE:
                # A family is named failing only for what failed: a fallback to eager
                # beside graph-break sites that held is "fallbacks to eager", never
                # "graph breaks" (issue 40); beside new sites that failed too it is named
                # as well, never folded into them (issue 54, finding 10).
                name = w.metric_name(row.metric)
            if name == "compile work" and row.verdict not in w.FAILING | {"inconclusive"}:
                name = "compile time"  # held: said with the compile time it explains
            if name is not None:
                by_family.setdefault(name, {}).setdefault(row.verdict, set()).add(version.label)
    failing = [f for f in w.FAMILIES if _has(by_family.get(f), w.FAILING)]
    failing += [f for f in by_family if f not in w.FAMILIES and _has(by_family[f], w.FAILING)]
    unclear = [f for f in by_family if f not in failing and "inconclusive" in by_family[f]]
    accepted = [f for f in w.FAMILIES if f not in failing and "accepted" in by_family.get(f, {})]
    accepted_text = f"{_and(accepted)} worse, {_accepted_by(judged)}" if accepted else ""
    if broken and "the run" not in failing:
        failing.append("the run")
    skip = failing + unclear + accepted + list(moved) + (["numerics"] if unreferenced else [])
    rest = _rest(by_family, skip)
    moved_text = "; ".join(
        [f"{family} moved: {said}" for family, said in moved.items()] + unreferenced
    )
    if moved_text and (failing or unclear or accepted_text):
        rest = [moved_text, *rest]
    if len(failing) == 1 and failing[0] in w.FAILING_ALONE:
        rest_text = "".join(f"; {part}" for part in rest)
        return w.FAIL_ICON, f"fails: {w.FAILING_ALONE[failing[0]]}{_where(run_set)}{rest_text}"
    groups = _versions_per_family(run_set, failing, by_family, broken)
    if len(groups) > 1:
        steps = _failing_steps(run_set)
        in_steps = f" in {_and(steps)}" if 0 < len(steps) <= 3 else ""
        said = [
            f"{_and([w.FAILING_IN_LIST.get(f, f) for f in families])} on "
            + torch_list([v for v in run_set.versions if v.label in labels])
            # `only` where another kind failed on these versions and more
            + (" only" if any(set(labels) < set(other) for other in groups) else "")
            for labels, families in groups.items()
        ]
        parts = [f"fails{in_steps}: " + ", ".join(said)]
        if unclear:
            parts.append(f"{_and(unclear)} inside the noise")
        return w.FAIL_ICON, "; ".join(parts + rest)
    if failing:
        where = _where(run_set)
        failing = [w.FAILING_IN_LIST.get(f, f) for f in failing]
        only = " only" if len(failing) == 1 and (rest or unclear) else ""
        parts = [f"fails on {_and(failing)}{only}{where}"]
        if unclear:
            parts.append(f"{_and(unclear)} inside the noise")
        if accepted_text:
            parts.append(accepted_text)
        return w.FAIL_ICON, "; ".join(parts + rest)
    if accepted_text:
        return "", "; ".join([f"passes: {accepted_text}", *rest])
    if unclear:
        where = torch_list([v for v in judged if v.overall == "inconclusive"])
        head = f"passes, but {_and(unclear)} could not be judged on {where}: inside the noise"
        return w.LOOK_ICON, "; ".join([head, *rest])
    if moved_text:
        return w.LOOK_ICON, "; ".join([f"passes, but {moved_text}", *rest])
    return "", "passes: " + "; ".join(rest or ["nothing compared"])


def _worded(
    judged: Sequence[VersionOutcome], worded: WordedRows
) -> list[list[tuple[MetricVerdict, WordedRow]]]:
    """Each judged version's rows, each with what report/ says of it."""
    return [
        [(row, worded.of(row)) for row in version.verdict.verdicts]
        for version in judged
        if version.verdict is not None
    ]


def _moved_counts(worded: Sequence[Sequence[tuple[MetricVerdict, WordedRow]]]) -> dict[str, str]:
    """Per family (`step work`, `compile work`), the exact counts that moved in its passing
    rows, within the tolerance (row_words/moved_counts.py): the largest move of each count
    across variants and versions, `ATen ops +34 (+1.0 %), FLOPs +8,000 (+<0.1 %), within
    the 2 % tolerance`."""
    largest: dict[str, dict[str, MovedCount]] = {}
    tolerance: dict[str, float] = {}
    for rows in worded:
        for row, said in rows:
            found = said.look
            if not isinstance(found, MovedWithinTolerance):
                continue
            family = w.metric_name(row.metric)
            tolerance[family] = found.tolerance_pct
            counts = largest.setdefault(family, {})
            for count in found.counts:
                if count.name not in counts or abs(count.delta) > abs(counts[count.name].delta):
                    counts[count.name] = count
    return {
        family: MovedWithinTolerance(tuple(counts.values()), tolerance[family]).words()
        for family, counts in largest.items()
    }


def _unreferenced(
    judged: Sequence[VersionOutcome], worded: Sequence[Sequence[tuple[MetricVerdict, WordedRow]]]
) -> list[str]:
    """The clause for numerics that passed without their float64 reference
    (row_words/numerics_reference.py), or none: `numerics checked against eager only (no
    float64 reference) on torch 2.4.1`."""
    weakened = [
        version
        for version, rows in zip(judged, worded, strict=True)
        if any(isinstance(said.look, WithoutReference) for _, said in rows)
    ]
    if not weakened:
        return []
    on = f" on {torch_list(weakened)}" if len(judged) > 1 else ""
    return [f"{UNREFERENCED}{on}"]


def _accepted_by(judged: Sequence[VersionOutcome]) -> str:
    """`accepted by @maintainer (label "compilegate: accept") at 0123456789ab`, once per
    distinct acceptance."""
    seen: list[str] = []
    for version in judged:
        by = version.verdict.accepted_by if version.verdict is not None else None
        if by:
            text = acceptance_words(by)
            if text not in seen:
                seen.append(text)
    return "accepted by " + _and(seen)


def _has(verdicts: dict[str, set[str]] | None, wanted: frozenset[str]) -> bool:
    return verdicts is not None and any(v in wanted for v in verdicts)


def _rest(by_family: dict[str, dict[str, set[str]]], skip: list[str]) -> list[str]:
    better = [
        f for f in w.FAMILIES if f in by_family and f not in skip and "improvement" in by_family[f]
    ]
    same = [
        f
        for f in w.FAMILIES
        if f in by_family
        and f not in skip
        and f not in better
        and f not in ("the run", "comparability", "removed steps")
        and set(by_family[f]) & {"pass", "skipped"}
    ]
    new = [
        f
        for f in w.FAMILIES
        if f in by_family and f not in skip + better + same and "new" in by_family[f]
    ]
    out = []
    if better:
        out.append(f"{_and(better)} better")
    if same:
        out.append(f"{', '.join(same)} unchanged")
    if new:
        out.append(f"{', '.join(new)} new (no baseline)")
    return out


def _versions_per_family(
    run_set: RunSetVerdict,
    failing: list[str],
    by_family: dict[str, dict[str, set[str]]],
    broken: list[VersionOutcome],
) -> dict[tuple[str, ...], list[str]]:
    """The failing families grouped by the labels of the versions they failed on, in the
    order failed."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for family in failing:
        labels = {
            label
            for verdict, found in by_family.get(family, {}).items()
            if verdict in w.FAILING
            for label in found
        }
        if family == "the run":
            labels |= {v.label for v in broken}
        in_order = tuple(v.label for v in run_set.versions if v.label in labels)
        groups.setdefault(in_order, []).append(family)
    return groups


def _failing_steps(run_set: RunSetVerdict) -> list[str]:
    steps: dict[str, None] = {}  # in order, once each (a result may hold 100,000 steps)
    for version in run_set.versions:
        for row in version.verdict.verdicts if version.verdict else ():
            if row.verdict in w.FAILING:
                steps.setdefault(row.step)
    return list(steps)


def _where(run_set: RunSetVerdict) -> str:
    """` on torch 2.4.1 and 2.13.0` (and the steps when only a few failed)."""
    hit_versions = []
    steps: dict[str, None] = {}  # in order, once each
    for version in run_set.versions:
        rows = [
            r
            for r in (version.verdict.verdicts if version.verdict else ())
            if r.verdict in w.FAILING
        ]
        if rows or version.document is None or version.overall == "error":
            hit_versions.append(version)
        for row in rows:
            steps.setdefault(row.step)
    where = f" in {_and(list(steps))}" if 0 < len(steps) <= 3 else ""
    return where + (f" on {torch_list(hit_versions)}" if hit_versions else "")


def torch_list(versions: Sequence[VersionOutcome]) -> str:
    """`torch 2.4.1 and 2.13.0` (local version suffixes such as +cu128 left out)."""
    labels = [f"torch {_plain_torch(v.torch)}" if v.torch else v.label for v in versions]
    if all(label.startswith("torch ") for label in labels):
        return "torch " + _and([label.removeprefix("torch ") for label in labels])
    return _and(labels)
