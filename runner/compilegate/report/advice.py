"""What to do about a failure, said where it decides: a rerun when noise or load more likely
explains it than the code, the command that accepts an intended change as the baseline, and
the label with which a maintainer accepts it on the pull request (gate/acceptance.py).

A failure is more likely load than code when
- this run measured the baseline's own commit on the baseline's torch (nothing changed but
  the machine's state),
- a compile's wall time moved while the compile's CPU time and its work counts (graphs,
  guards, kernels: deterministic) did not, or
- the metric has no noise estimate at all (a compile time is one cold compile per run), so
  nothing says how far it moves between identical runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from ..errors import EXIT_NOT_JUDGED, EXIT_OK, EXIT_REGRESSION
from ..gate.judges.speed_facts import NotJudged
from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import NOISE_FROM_HISTORY, REFRESH_TEMPLATE, MetricVerdict
from . import wording as w
from .row_cells import PER_YARDSTICK, YARDSTICK_UNIT, change_text, judged_change
from .row_words.speed import not_judged_reason, not_judged_why
from .wording import and_list as _and

TIMED_UNITS = ("x", "ms", "s", "yardsticks", "bytes")
REFRESHABLE = (EXIT_REGRESSION, EXIT_NOT_JUDGED)


def advice_for(run_set: RunSetVerdict) -> list[tuple[str, str | None]]:
    """(sentence, command or None), each said once for all the versions it applies to."""
    grouped: dict[str, list[str]] = {}
    for version in run_set.versions:
        for template in _version_advice(version):
            grouped.setdefault(template, []).append(_torch(version))
    out: list[tuple[str, str | None]] = []
    for template, labels in grouped.items():
        sentence = template.replace("{on}", _and(labels))
        out.append((sentence[0].upper() + sentence[1:], None))
    out += [(sentence, None) for sentence in _unjudged_sentences(run_set)]
    accept_labels: dict[str, list[str]] = {}
    for version in run_set.versions:
        if version.accept_label and version.verdict and version.verdict.rows("regression"):
            accept_labels.setdefault(version.accept_label, []).append(_torch(version))
    by_label = [
        f"Regressions on {_and(on)} intended? A maintainer other than the author accepts "
        f'them for this commit with the label "{label}" (errors and unjudged rows still fail)'
        for label, on in accept_labels.items()
    ]
    paired = [
        _torch(v)
        for v in run_set.versions
        if v.verdict and v.verdict.paired and v.verdict.exit_code in REFRESHABLE
    ]
    if paired:
        # With an accept label, accepting is the label's (said below): merging is not
        # another way to accept a failing job (issue 54, finding 10).
        after = (
            "once the change is merged, later paired runs measure it as their base"
            if by_label
            else "if the change is intended, it is accepted by merging it; the base's next "
            "paired runs measure it"
        )
        out.append(
            (
                f"Paired run on {_and(paired)}: the base was measured in this job, beside the "
                f"head, so there is no stored baseline to refresh; {after}.",
                None,
            )
        )
    refresh = [v for v in run_set.versions if v.verdict and v.verdict.failing_refresh_command]
    out += [(sentence + ".", None) for sentence in by_label[:-1]]
    if refresh and by_label:
        # The two ways through said as one: the label for this commit, or the baseline.
        sentence, command = _accept(refresh, run_set, lead=f"{by_label[-1]}, or ")
        out.append((sentence, command))
    elif refresh:
        out.append(_accept(refresh, run_set))
    elif by_label:
        out.append((by_label[-1] + ".", None))
    return out


def _accept(
    refresh: list[VersionOutcome], run_set: RunSetVerdict, *, lead: str = ""
) -> tuple[str, str]:
    """One way to accept an intended change, however many versions failed: a stored baseline
    holds one torch's result, so the result to accept is the one on the baseline's torch
    (else the newest version's). `lead`: what the sentence follows (the accept label)."""
    baseline = run_set.baseline
    base_torch = baseline.environment.torch if baseline is not None else None
    own = [v for v in refresh if base_torch and v.torch and _torch(v) == _torch_of(base_torch)]
    chosen = own[0] if own else refresh[-1]
    sentence = (
        f"{lead}the change becomes the baseline on the default branch"
        if lead
        else "If the change is intended, accept it as the baseline on the default branch"
    )
    if len(run_set.versions) > 1:
        whose = " (the baseline's torch)" if own else ""
        sentence += f" with the result on {_torch(chosen)}{whose}"
    return sentence + ":", refresh_command(chosen, run_set)


def refresh_command(version: VersionOutcome, run_set: RunSetVerdict) -> str:
    """The command that accepts this version's result as the baseline."""
    if version.verdict is not None and version.verdict.refresh_command:
        return version.verdict.refresh_command
    if run_set.baseline_source:
        args = ["--result", version.source, "--baseline", run_set.baseline_source]
        return shlex.join(["compilegate", "baseline", "update", *args])
    return REFRESH_TEMPLATE


# Step times not judged for an unsteady machine (gate/judges/speed.py) name the run-health
# line, which the first screen shows above the advice with what to do about it.
UNSTEADY_WHY = "the machine was unsteady (run health, above)"


def _unjudged_sentences(run_set: RunSetVerdict) -> list[str]:
    """Step times that moved beyond their limit where the gate may not fail on them, one
    sentence for every version that says the same why: `Step times moved beyond their
    limits on torch 2.9.1 and 2.10.0 but were not judged (torch 2.9.1: gpt: eager +11 %;
    torch 2.10.0: per yardstick: gpt: eager +27 %): …`."""
    by_why: dict[str, list[tuple[str, str]]] = {}
    for version in run_set.versions:
        found = _unjudged_step_times(version)
        if found is not None:
            changes, why = found
            by_why.setdefault(why, []).append((_torch(version), changes))
    sentences = []
    for why, moved in by_why.items():
        labels = [label for label, _ in moved]
        bare = [label.removeprefix("torch ") for label in labels]
        torch_only = all(label.startswith("torch ") for label in labels)
        on = "torch " + _and(bare) if torch_only else _and(labels)
        if len(moved) == 1:
            changes = moved[0][1]
        else:
            changes = "; ".join(f"{label}: {said}" for label, (_, said) in zip(bare, moved))
        sentences.append(
            f"Step times moved beyond their limits on {on} but were not judged ({changes}): {why}."
        )
    return sentences


def _unjudged_step_times(version: VersionOutcome) -> tuple[str, str] | None:
    """(`per yardstick: gpt: eager +57 %, p25 +83 %`, why they were not judged) for step
    times that grew beyond their limit in a comparison that may not fail on them
    (gate/judges/speed.py, step_time_gate): said on the first screen, with why and what
    would judge them, since no row of the first screen's table carries them."""
    report = version.verdict
    if report is None:
        return None
    moved = [
        row
        for row in report.verdicts
        if not w.gated(row)
        and not_judged_why(row) is not None
        and row.change is not None
        and row.threshold is not None
        and row.change > row.threshold  # slower: a faster step needs no look
    ]
    if not moved:
        return None
    # `gpt: eager +57 %, p25 +83 %; default, dynamic compiled +16 %, p25 +38 % — mlp: …`:
    # a variant's name may hold a comma, so variants are parted by semicolons, steps by dashes.
    steps: dict[str, dict[str, list[MetricVerdict]]] = {}
    for row in moved:
        what = "eager" if row.variant == "eager" else f"{w.variant_name(row.variant)} compiled"
        steps.setdefault(row.step, {}).setdefault(what, []).append(row)
    changes = " — ".join(
        f"{step}: " + "; ".join(f"{what} {_changes(rows)}" for what, rows in variants.items())
        for step, variants in steps.items()
    )
    if all(row.unit == YARDSTICK_UNIT for row in moved):
        changes = f"{PER_YARDSTICK}: {changes}"
    why = not_judged_why(moved[0])
    assert why is not None  # as `moved` was chosen
    if not_judged_reason(moved[0]) is NotJudged.UNSTEADY_RUN:
        # the run-health line above says why, and what to do about an unsteady machine
        why = UNSTEADY_WHY
    return changes, why


def _changes(rows: list[MetricVerdict]) -> str:
    """`+57 %, p25 +83 %`: the changes judged (row_cells.judged_change), `per yardstick`
    said once for the version where every one is in yardstick units."""
    said = [("p25 " if row.metric.endswith("_p25") else "") + change_text(row) for row in rows]
    if any(r.unit == YARDSTICK_UNIT for r in rows) and not all(
        r.unit == YARDSTICK_UNIT for r in rows
    ):
        said = [judged_change(r) if r.unit == YARDSTICK_UNIT else t for r, t in zip(rows, said)]
    return ", ".join(said)


def _version_advice(version: VersionOutcome) -> Iterator[str]:
    report = version.verdict
    if report is None or (report.exit_code == EXIT_OK and not report.rows("inconclusive")):
        return
    failing = [r for r in report.verdicts if r.verdict in w.FAILING]
    # Only when every failing row is timed: never above a failing graph break or count.
    all_timed = bool(failing) and all(r.unit in TIMED_UNITS for r in failing)
    if all_timed and _same_code_and_torch(version):
        yield (
            "{on} measured the baseline's own commit on the baseline's torch: what moved "
            "is the machine, not the code. Rerun before acting on it."
        )
    compile_rows = [
        r
        for r in report.verdicts
        if r.metric == "compile_s" and r.verdict in w.FAILING | {"inconclusive"}
    ]
    for row in compile_rows:
        if _compile_work_unmoved(report.verdicts, row):
            yield (
                f"{w.row_subject(row)} on {{on}}: the compile's wall time moved, but its CPU "
                "time and work counts did not: load on the runner is the likelier cause. Rerun."
            )
    unmeasured = [r for r in failing if r.unit in TIMED_UNITS and r.noise_pct is None]
    names = sorted({w.metric_name(r.metric) for r in unmeasured})
    if names:
        yield (
            f"{_and(names)} on {{on}} has no noise estimate (one measurement a run), so a "
            "change there was judged on its threshold alone: rerun to see whether it repeats."
        )
    unclear = report.rows("inconclusive")
    if unclear:
        names = sorted({w.metric_name(r.metric) for r in unclear})
        how = "rerun with more processes or iterations to decide."
        if all(r.noise_source == NOISE_FROM_HISTORY for r in unclear):
            how = (
                "that noise is the default branch's own run-to-run spread: more iterations "
                "or processes in the base branch's config, or more default-branch runs in "
                "the baseline, narrow it; a rerun does not."
            )
        yield (
            f"{_and(names)} on {{on}} moved beyond the limit but inside the noise: the job "
            f"does not fail on it; {how}"
        )


def _same_code_and_torch(version: VersionOutcome) -> bool:
    report = version.verdict
    if report is None:
        return False
    base, cur = report.baseline, report.current
    return bool(base.commit and base.commit == cur.commit and base.torch == cur.torch)


def _compile_work_unmoved(rows: tuple[MetricVerdict, ...], wall: MetricVerdict) -> bool:
    """True when the same variant's compile CPU time and work counts were judged and held."""
    siblings = {
        r.metric: r.verdict
        for r in rows
        if (r.step, r.variant) == (wall.step, wall.variant)
        and r.metric in ("compile_cpu_s", "compile_work", "compile_instructions")
    }
    return bool(siblings) and all(v in ("pass", "improvement") for v in siblings.values())


def _torch(version: VersionOutcome) -> str:
    return _torch_of(version.torch) if version.torch else version.label


def _torch_of(version: str) -> str:
    return f"torch {version.split('+')[0]}"
