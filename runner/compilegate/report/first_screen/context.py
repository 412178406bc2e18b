"""What the first screen says around its tables: the context lines (head vs baseline
commit, the machine, the torch versions, the links), the run-health line (an unsteady
machine, said once for every version it concerns) and the footnotes under "Reading these
numbers" (every health cause in full, the estimator behind the speeds, how each speed row
was judged, the yardstick)."""

from __future__ import annotations

from ...gate.run_set import RunSetVerdict
from ...results.model import Environment
from .. import wording as w
from ..health_words import HEALTH_PREFIX, SaidCause, health_after_prefix, health_parts
from ..links import LinkContext
from ..note_words import paired_summary
from ..row_words.speed import compares_fastest_iterations
from ..speeds import estimator_text, variant_speed
from ..wording import and_list as _and
from ..wording import plain_torch as _plain_torch
from .model import Item
from .versions import version_label as _version_label

PROCESSES_NOTE = (
    "Speed rows against the baseline compare each process's fastest iterations (what load "
    "moves least), so their values are not the compiled-vs-eager speeds above."
)
PAIRED_NOTE = (
    "Paired: the base was measured in this job, on this machine, its processes alternating "
    "with the head's (A B B A); each head process is judged against the base process beside "
    "it, so what the machine did meanwhile cancels, and the noise is the 95 % interval of "
    "those paired differences."
)
# The first screen's run-health line, in a few words (the causes in full are footnotes).
SHORT_UNSTEADY = "the machine was unsteady"
SHORT_HEALTH = "Step times reported, not judged: rerun when it is quiet, or paired (run --against)."
SHORT_PAIRED_HEALTH = "Head vs base judged on their paired differences; no recommendation."
YARDSTICK_NOTE = (
    "Step-time changes between runs on the same torch are judged against a fixed torch "
    "workload timed beside the step (the yardstick), so a runner that is slower today does "
    "not read as a slower step: the milliseconds and the % beside them are what was "
    "measured, the change “per yardstick” what was judged."
)


def health_lines(run_set: RunSetVerdict) -> list[str]:
    """The run-health line, once, in two lines of the comment at most: the versions whose
    machine was unsteady, the first cause of each group of like causes in a few words and
    how many more, and what that means. Every cause in full is under "Reading these
    numbers" (_health_in_full)."""
    groups: dict[tuple[SaidCause, ...], list[str]] = {}
    paired = False
    for version in run_set.versions:
        parts = health_parts(version.document) if version.document is not None else None
        if parts is None:
            continue
        groups.setdefault(tuple(parts[0]), []).append(_version_label(version))
        paired |= version.document is not None and version.document.pairing is not None
    if not groups:
        return []
    several = len(run_set.versions) > 1
    said = []
    for causes, labels in groups.items():
        first = causes[0].short
        more = len(causes) - 1
        first += f" (+{more} more)" if more else ""
        said.append(f"torch {_and(labels)}: {first}" if len(groups) > 1 else first)
    on = f" (torch {_and(next(iter(groups.values())))})" if several and len(groups) == 1 else ""
    consequence = SHORT_PAIRED_HEALTH if paired else SHORT_HEALTH
    return [f"{HEALTH_PREFIX}{on}: {SHORT_UNSTEADY} — " + "; ".join(said) + f". {consequence}"]


def _health_in_full(run_set: RunSetVerdict) -> list[str]:
    """Every cause of an unsteady machine, for "Reading these numbers": the line each run
    says (report/health_words.health_line), once for the versions that say it alike."""
    lines: dict[str, list[str]] = {}
    for version in run_set.versions:
        line = health_after_prefix(version.document) if version.document is not None else None
        if line:
            lines.setdefault(line, []).append(_version_label(version))
    several = len(run_set.versions) > 1
    return [
        "Run health" + (f" (torch {_and(labels)})" if several else "") + line
        for line, labels in lines.items()
    ]


def context_of(
    run_set: RunSetVerdict, links: LinkContext
) -> tuple[tuple[tuple[Item, ...], ...], ...]:
    """Two lines: the commits and the machine; the torch versions and the links."""
    first = next((v.document for v in run_set.versions if v.document is not None), None)
    env = first.environment if first is not None else Environment()
    baseline = run_set.baseline
    base_env = baseline.environment if baseline is not None else Environment()
    head = links.head_sha or env.commit
    base = base_env.commit
    groups: list[tuple[Item, ...]] = [
        (Item("head", style="bold"), Item(_short(head), links.commit_url(head), "code"))
    ]
    measured = _commits_measured(run_set)
    if len(measured) > 1:
        # Versions measured at different commits: each one's, never one for all (issue 54,
        # finding 10).
        items = [Item("head", style="bold")]
        for commit, labels in measured.items():
            items += [
                Item(_short(commit), links.commit_url(commit), "code"),
                Item(f"(torch {_and(labels)})"),
            ]
        groups = [tuple(items)]
    if run_set.baseline is not None:
        paired = next((v.verdict.paired for v in run_set.versions if v.verdict), None)
        about = [f"torch {_plain_torch(base_env.torch)}"] if base_env.torch else []
        about += [paired_summary(paired)] if paired else []
        groups.append(
            (
                Item("base" if paired else "baseline", style="bold"),
                Item(_short(base), links.commit_url(base), "code"),
                *([Item(f"({'; '.join(about)})")] if about else []),
            )
        )
    where = env.gpu_name or (
        f"CPU {env.cpu_model or env.processor or '?'}, {env.cpu_count or '?'} cores"
    )
    runner = f"runner {links.runner}: {where}" if links.runner else f"measured on {where}"
    groups.append((Item(runner),))
    torches = [_plain_torch(v.torch) if v.torch else v.label for v in run_set.versions]
    second: list[tuple[Item, ...]] = [(Item("torch", style="bold"), Item(", ".join(torches)))]
    base_torch_plain = _plain_torch(base_env.torch) if base_env.torch else None
    # Each version against the torch it was judged against (a paired leg: its own base's).
    other = [
        _plain_torch(v.torch)
        for v in run_set.versions
        if v.torch and _other_torch(v.torch, v.base_torch or base_env.torch)
    ]
    upgrade = "an upgrade check against the baseline's torch"
    if other == torches and len(torches) == 1:
        # `torch 2.13.0: an upgrade check…`, not `torch 2.13.0 · 2.13.0: an upgrade check…`
        second = [(Item("torch", style="bold"), Item(f"{torches[0]}: {upgrade}"))]
    elif other:
        named = _and(other) if len(other) <= 3 else f"{len(other)} versions"
        second.append((Item(f"{named}: {upgrade}"),))
    second += [(Item(label, url),) for label, url in links.run_links()]
    if len(second) == 1 and torches == [base_torch_plain]:
        # One version, the baseline's torch (said beside it) and no links: a line of nothing new.
        return (tuple(groups),)
    return (tuple(groups), tuple(second))


def _other_torch(torch: str, judged_against: str | None) -> bool:
    """Whether a version was judged against a baseline measured on another torch."""
    return bool(judged_against) and _plain_torch(torch) != _plain_torch(str(judged_against))


def _commits_measured(run_set: RunSetVerdict) -> dict[str, list[str]]:
    """Each commit the versions' results were measured at, with the versions at it."""
    found: dict[str, list[str]] = {}
    for version in run_set.versions:
        commit = version.document.environment.commit if version.document is not None else None
        if commit:
            found.setdefault(str(commit), []).append(_version_label(version))
    return found


def footnotes_of(run_set: RunSetVerdict) -> list[str]:
    estimators: list[str] = []
    yardstick = processes = paired = False
    for version in run_set.versions:
        for step in version.document.steps if version.document is not None else ():
            for variant in step.variants:
                speed = variant_speed(step, variant)
                if speed is not None and speed.estimator not in estimators:
                    estimators.append(speed.estimator)
        if version.verdict is not None:
            yardstick |= any(r.normalisation == "yardstick" for r in version.verdict.verdicts)
            processes |= any(compares_fastest_iterations(r) for r in version.verdict.verdicts)
            paired |= version.verdict.paired is not None
    notes = [*_health_in_full(run_set)]
    if estimators:
        described = "; ".join(estimator_text(e) for e in estimators)
        notes.append(f"Compiled vs eager: {described}.")
    judged_how = speed_judged_how(run_set)
    if judged_how:
        notes.append(judged_how)
    if processes:
        notes.append(PROCESSES_NOTE)
    if paired:
        notes.append(PAIRED_NOTE)
    if yardstick:
        notes.append(YARDSTICK_NOTE)
    return notes


# Rows about the step's speed, by how the gate judged them (issue 39).
SPEED_COUNT_METRICS = ("step_work",)
SPEED_TIME_FAMILIES = ("speedup", "eager_step_ms", "compiled_step_ms")


def speed_judged_how(run_set: RunSetVerdict) -> str | None:
    """Which speed rows were judged by counts (the same on any machine and load), which by
    time, and which were only reported: `Judged by counts of work (…): step work. Judged by
    time: speedup vs eager. Only reported: eager step time; compiled step time.` None
    without speed rows."""
    counted: list[str] = []
    timed: list[str] = []
    reported: list[str] = []
    for version in run_set.versions:
        for row in version.verdict.verdicts if version.verdict is not None else ():
            if row.metric in SPEED_COUNT_METRICS and w.gated(row):
                target = counted
            elif row.metric.startswith(SPEED_TIME_FAMILIES):
                target = timed if w.gated(row) else reported
            else:
                continue
            name = w.metric_name(row.metric)
            if name not in target:
                target.append(name)
    reported = [name for name in reported if name not in timed]
    # A name may hold a comma (`eager step time, 25th percentile`): names are parted by
    # semicolons, the three kinds by sentences.
    parts = [
        f"{how} {'; '.join(names)}."
        for how, names in (
            ("Judged by counts of work (the same on any machine, under any load):", counted),
            ("Judged by time:", timed),
            ("Only reported:", reported),
        )
        if names
    ]
    return " ".join(parts) if parts else None


def _short(sha: object) -> str:
    return str(sha)[:7] if sha else "(not recorded)"
