"""The processes of a step: one record per child process, and the per-process values the gate
compares across runs.

Every child that times the step (an eager reference, a variant's first process, a variant's
later timing-only processes) leaves a record: each side's fastest iteration (stats.fastest),
the eager median kept for reading, and the raw samples. From the records of one run:

    eager time       one value per process that timed eager: the geometric mean of the
                     fastest iterations of eager and its twin (two identical copies)
    compiled time    one value per process of the variant: its fastest compiled iteration
    speedup          one value per process of the variant: eager / compiled, as above

Step times are divided by the fastest yardstick iteration of the same process when the
comparison normalises (gate/judges/speed.py decides); a speedup needs no yardstick. Which of
the two yardsticks (GPU-bound, launch-bound) is the one the step follows: results/yardsticks.py.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .model import FastestMs, HistoryRun, Process, Step, Variant
from .process_report import TIMED_SIDES as SIDES
from .process_report import ProcessReport
from .stats import fastest, quantile

GPU_BOUND = "yardstick"  # matmuls and element-wise ops (child/timing.Yardstick)
LAUNCH_BOUND = "yardstick_launch"  # a chain of tiny kernels (child/timing.LaunchYardstick)


def process_record(measured: ProcessReport) -> Process:
    """One child's timing in a line: each side's fastest iteration (ms), the eager median,
    the raw samples (ms, in the order they were timed), the CPUs its timed rounds were
    pinned to and the seconds of each phase of its work (None: a child of an older release;
    `cpus` None also when not pinned)."""
    timed = measured.timed
    present = [side for side in SIDES if side in timed and timed[side].samples_ms]
    return Process(
        step_ms=statistics.median(measured.side("eager").samples_ms),
        fastest_ms=FastestMs(**{side: fastest(timed[side].samples_ms) for side in present}),
        samples_ms=MappingProxyType({side: timed[side].samples_ms for side in present}),
        cpus=measured.cpus,
        phases_s=measured.phases_s,
    )


Key = tuple[str, int]


def keyed_step_processes(step: Step) -> list[tuple[Key, Process]]:
    """Every process of this step that timed eager: eager references and variants', each
    with where it came from: ("eager", i) for the i-th eager reference, (variant id, i) for
    the i-th process of a variant. In a paired run, the processes with the same key on both
    sides ran next to each other."""
    eager = step.eager.processes if step.eager is not None else None
    keyed = [(("eager", i), p) for i, p in enumerate(eager or ())]
    for variant in step.variants:
        if not variant.failed:
            keyed += [((variant.id, i), p) for i, p in enumerate(variant.processes or ())]
    return [(key, p) for key, p in keyed if _fastest(p, "eager")]


def keyed_variant_processes(variant: Variant | None) -> list[tuple[Key, Process]]:
    """The variant's processes that timed eager and compiled, keyed as keyed_step_processes."""
    if variant is None:
        return []
    return [
        ((variant.id, i), p)
        for i, p in enumerate(variant.processes or ())
        if _fastest(p, "eager") and _fastest(p, "compiled")
    ]


def step_processes(step: Step) -> list[Process]:
    """keyed_step_processes without their keys: every process of the step that timed eager."""
    return [process for _, process in keyed_step_processes(step)]


def variant_processes(variant: Variant | None) -> list[Process]:
    """keyed_variant_processes without their keys."""
    return [process for _, process in keyed_variant_processes(variant)]


def paired_records(
    base: Sequence[tuple[Key, Process]], head: Sequence[tuple[Key, Process]]
) -> tuple[list[Process], list[Process]]:
    """The records of both sides that ran as pairs (the same key), in the base's order."""
    heads = dict(head)
    pairs = [(record, heads[key]) for key, record in base if key in heads]
    return [b for b, _ in pairs], [h for _, h in pairs]


def round_ratio(
    head: Sequence[float],
    head_rounds: Sequence[int],
    base: Sequence[float],
    base_rounds: Sequence[int],
) -> float:
    """Head/base of one process that timed both (base and head in one process): per round,
    the fastest iteration of the head's block over the fastest of the base's block, timed
    next to each other; the geometric mean over the rounds. A drift from round to round
    falls on both blocks of a round and leaves their ratio, as in the speedup. The fastest
    of a block, as the step-time rows use the fastest of a process: on the shared 2-core
    machine the A/A interval over in-process pairs was ±16.4 % (compiled) and ±6.2 %
    (eager) with block minima, ±23.0 % and ±8.3 % with block medians (3 A/A runs)."""
    ratios = []
    for number in sorted(set(base_rounds)):
        h = [v for v, r in zip(head, head_rounds) if r == number]
        b = [v for v, r in zip(base, base_rounds) if r == number]
        if h and b:
            ratios.append(min(h) / min(b))
    return geometric_mean(ratios)


def head_vs_base(head: ProcessReport, base: ProcessReport) -> dict[str, float]:
    """The head process record's `head_vs_base`: round_ratio of eager (its twin's too, the
    geometric mean of both) and of the compiled copy when there is one."""

    def of(copy: str) -> float:
        h, b = head.side(copy), base.side(copy)
        return round_ratio(h.samples_ms, h.rounds, b.samples_ms, b.rounds)

    out = {"eager": math.sqrt(of("eager") * of("eager_b"))}
    if "compiled" in head.timed and "compiled" in base.timed:
        out["compiled"] = of("compiled")
    return out


def within_process(
    base_values: Sequence[float], head_values: Sequence[float], head: Sequence[Process], kind: str
) -> list[float]:
    """A paired comparison's head values, where a pair's head record was measured in one
    process with its base (`head_vs_base`): the base's value times that process's round
    ratio (kind `eager`, `compiled`, or `speedup`: eager over compiled), so that the pair's
    ratio is the one measured inside the process. Other pairs keep their own value."""
    out = []
    for base_value, head_value, record in zip(base_values, head_values, head):
        ratios = _head_vs_base(record)
        if kind == "speedup" and "eager" in ratios and "compiled" in ratios:
            out.append(base_value * ratios["eager"] / ratios["compiled"])
        elif kind in ratios:
            out.append(base_value * ratios[kind])
        else:
            out.append(head_value)
    return out


def eager_values(
    records: Sequence[Process], *, per_yardstick: bool, yardstick: str = GPU_BOUND
) -> list[float]:
    """Each process's eager time, divided by its fastest `yardstick` when `per_yardstick`."""
    return [
        _per(r, _eager_ms(r), per_yardstick, yardstick)
        for r in records
        if _usable(r, per_yardstick, yardstick)
    ]


def compiled_values(
    records: Sequence[Process], *, per_yardstick: bool, yardstick: str = GPU_BOUND
) -> list[float]:
    return [
        _per(r, _timed(r, "compiled"), per_yardstick, yardstick)
        for r in records
        if _usable(r, per_yardstick, yardstick)
    ]


def speedup_values(records: Sequence[Process]) -> list[float]:
    return [_eager_ms(r) / _timed(r, "compiled") for r in records]


# A process whose two eager copies' fastest iterations are more than this far apart was
# disturbed while it ran: its eager time, and the speedup taken from it, measure the
# disturbance. The twins of 106 real processes (the H200 runs, nanoGPT, the golden
# documents) agreed within x1.39; a load spike inside one process of a loaded baseline put
# its eager at 341.8 ms beside its twin's 35.5 ms (x9.6).
DISTURBED_TWINS_RATIO = 2.0


def twins_ratio(record: Process) -> float | None:
    """How far apart the fastest iterations of the process's eager twins are (>= 1), or
    None when it timed no twin."""
    eager, twin = _fastest(record, "eager"), _fastest(record, "eager_b")
    if eager is None or twin is None:
        return None
    return max(eager, twin) / min(eager, twin)


def is_disturbed(record: Process) -> bool:
    """Whether the process's eager twins disagree beyond DISTURBED_TWINS_RATIO."""
    ratio = twins_ratio(record)
    return ratio is not None and ratio > DISTURBED_TWINS_RATIO


def geometric_mean(values: Sequence[float]) -> float:
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def all_timed_yardstick(records: Sequence[Process], yardstick: str = GPU_BOUND) -> bool:
    return bool(records) and all(_fastest(r, yardstick) for r in records)


def _eager_ms(record: Process) -> float:
    twin = _fastest(record, "eager_b")
    eager = _timed(record, "eager")
    return math.sqrt(eager * twin) if twin else eager


def _per(record: Process, value: float, per_yardstick: bool, yardstick: str = GPU_BOUND) -> float:
    return value / _timed(record, yardstick) if per_yardstick else value


def _usable(record: Process, per_yardstick: bool, yardstick: str = GPU_BOUND) -> bool:
    return not per_yardstick or bool(_fastest(record, yardstick))


def _timed(record: Process, side: str) -> float:
    """The fastest iteration of a side the caller chose the record for (keyed_*_processes,
    _usable): its absence is a bug, not a process that did not time it."""
    value = _fastest(record, side)
    if value is None:
        raise ValueError(f"a process record without a {side} time reached a per-process value")
    return value


def _fastest(record: Process, side: str) -> float | None:
    value = getattr(record.fastest_ms, side, None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def quantile_values(
    records: Sequence[Process], copies: tuple[str, ...], q: float, *, per_yardstick: bool
) -> list[float]:
    """One value per process: the geometric mean over `copies` of each copy's q-quantile,
    divided by the yardstick's q-quantile when `per_yardstick`."""
    values = []
    for record in records:
        samples = samples_of(record)
        present = [side for side in copies if _positive(samples.get(side))]
        value = math.exp(
            math.fsum(math.log(quantile(sorted(samples[s]), q)) for s in present) / len(present)
        )
        if per_yardstick:
            value /= quantile(sorted(samples["yardstick"]), q)
        values.append(value)
    return values


def sampled(record: Process, side: str) -> bool:
    """Whether the record kept its raw samples of `side` (and of the yardstick, when timed)."""
    samples = samples_of(record)
    if not _positive(samples.get(side)):
        return False
    timed_yardstick = record.fastest_ms.yardstick is not None
    return not timed_yardstick or _positive(samples.get("yardstick"))


def samples_of(record: Process) -> Mapping[str, Sequence[float]]:
    return record.samples_ms or {}


def _head_vs_base(record: Process) -> Mapping[str, float]:
    return record.head_vs_base or {}


def _positive(samples: Any) -> bool:
    return (
        isinstance(samples, (list, tuple))
        and bool(samples)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in samples)
        and all(math.isfinite(v) for v in samples)
    )


def run_summary(step: Step) -> HistoryRun | None:
    """One run of a step as a baseline's history keeps it (gate/history.py) and the
    trend draws it last (report/trend.py): the values the speed rows compare (raw
    milliseconds, yardstick units where every process timed the yardstick, speedups). None
    for a step that did not measure."""
    if step.failed:
        return None
    eager = step_processes(step)
    if not eager:
        return None
    variants: dict[str, dict[str, float | None]] = {}
    for variant in step.variants:
        records = variant_processes(variant)
        if variant.failed or not records:
            continue
        variants[variant.id] = {
            "speedup": _mean(speedup_values(records)),
            "compiled_step_ms": _mean(compiled_values(records, per_yardstick=False)),
            "compiled_step_yardsticks": _mean_yardsticks(records, compiled_values),
            **_p25(records, "compiled_step", ("compiled",)),
        }
    eager_p25 = _p25(eager, "eager_step", ("eager", "eager_b"))
    return HistoryRun(
        config_fingerprint=step.config_fingerprint,
        eager_step_ms=_mean(eager_values(eager, per_yardstick=False)),
        eager_step_yardsticks=_mean_yardsticks(eager, eager_values),
        eager_step_p25_ms=eager_p25.get("eager_step_p25_ms"),
        eager_step_p25_yardsticks=eager_p25.get("eager_step_p25_yardsticks"),
        variants=variants,
    )


def _mean(values: Sequence[float]) -> float | None:
    return geometric_mean(values) if values else None


def _mean_yardsticks(
    records: Sequence[Process], values_of: Callable[..., list[float]]
) -> float | None:
    if not all_timed_yardstick(records):
        return None
    return _mean(values_of(records, per_yardstick=True))


def _p25(records: Sequence[Process], family: str, copies: tuple[str, ...]) -> dict[str, float]:
    """The run's 25th percentile rows (judges/distribution.py) as its history keeps them:
    the geometric mean over processes of each one's p25, raw and in yardstick units; none
    when a process did not keep its samples."""
    if not records or not all(sampled(record, copies[0]) for record in records):
        return {}
    summary = {
        f"{family}_p25_ms": geometric_mean(
            quantile_values(records, copies, 0.25, per_yardstick=False)
        )
    }
    if all_timed_yardstick(records):
        summary[f"{family}_p25_yardsticks"] = geometric_mean(
            quantile_values(records, copies, 0.25, per_yardstick=True)
        )
    return summary
