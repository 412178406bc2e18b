"""Run health: was the machine steady enough for this run's numbers to mean anything?

Every run records `run_health`: what the host saw while it measured (run/machine_load.py:
load average, the share of the CPU other processes took, CPU steal) and what the run's own
measurements show of the machine's mood — the widest eager A/A noise of its steps (two
identical copies of the step, timed alternately in one process, that should agree) and the
yardstick's drift (the same fixed workload, timed beside the step in every process: how far
its fastest time moved between processes). A run is `unsteady` when any of them is beyond
what a quiet runner shows (the limits below; on this project's 2-core runner, idle: others
≤ 5 %, A/A ≤ ±10 %, drift ≤ 10 %; with two busy loops: others 50–95 %, A/A up to ±235 %),
and then every report says so in one line at its top: the gate's noise estimates come from
the same unsteady minutes, and a recommendation timed in them predicts nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from .model import GpuHealth, MachineHealth, ResultDocument, RunHealth, Step

OTHERS_CPU_LIMIT_PCT = 25.0
STEAL_LIMIT_PCT = 5.0
AA_NOISE_LIMIT_PCT = 25.0
YARDSTICK_DRIFT_LIMIT_PCT = 25.0
# A GPU's SM clock under load: fixed on a dedicated H200 (1980 MHz throughout, 2026-12-04);
# boost moving it by more than this is a different machine from one block to the next.
SM_CLOCK_MOVE_PCT = 5.0
# What every unsteady run whose CPU steps used several threads is told (health_line).
THREADS_HINT = "setting threads: 1 in the step's config steadies it"


def run_health(
    machine: MachineHealth, steps: Sequence[Step], gpu: GpuHealth | None = None
) -> RunHealth:
    """The `run_health` of a result: the machine's load, the GPU's state (NVML, where the
    steps ran on a GPU and it answered: run/gpu_state.py), the run's own signs of it in its
    `steps` as measured (typed), and the reasons (empty when steady)."""
    health = RunHealth(
        machine=machine,
        gpu=gpu,
        aa_noise_pct=widest_aa_noise_pct(steps),
        yardstick_drift_pct=yardstick_drift_pct(steps),
        multi_threaded=multi_threaded(steps),
    )
    return replace(health, unsteady=tuple(unsteady_reasons(health)))


def unsteady_reasons(health: RunHealth) -> list[str]:
    """Why the run's machine was too unsteady to decide anything, in the reader's words."""
    machine = health.machine or MachineHealth()
    reasons = []
    cores = machine.cpu_count
    others = machine.others_cpu_pct
    load = machine.load_average_mean
    if _over(others, OTHERS_CPU_LIMIT_PCT):
        reasons.append(
            f"other processes took {others:.0f} % of its CPU"
            + (f" (load average {load:.1f} on {cores} cores)" if load is not None else "")
        )
    elif others is None and load is not None and cores and load > cores:
        reasons.append(f"load average {load:.1f} on {cores} cores")
    steal = machine.steal_pct
    if _over(steal, STEAL_LIMIT_PCT):
        reasons.append(f"the hypervisor stole {steal:.0f} % of its CPU")
    reasons.extend(gpu_reasons(health.gpu))
    host_busy = bool(reasons)
    aa = health.aa_noise_pct
    if _over(aa, AA_NOISE_LIMIT_PCT):
        reasons.append(f"two identical copies of a step disagreed by up to ±{aa:.0f} % (A/A)")
    drift = health.yardstick_drift_pct
    if _over(drift, YARDSTICK_DRIFT_LIMIT_PCT):
        size = f"{drift:.0f} %" if drift < 100 else f"{drift / 100 + 1:.3g}×"
        reason = f"the yardstick drifted {size} between processes (a quarter or more)"
        if health.multi_threaded and not host_busy:
            reason += (
                " while nothing else was busy: it is timed with the steps' threads "
                f"(threads unset or above 1), and several threads{_on_cores(cores)} wander "
                f"from process to process even on an idle machine; {THREADS_HINT}"
            )
        reasons.append(reason)
    return reasons


def gpu_reasons(gpu: GpuHealth | None) -> list[str]:
    """What of the GPU's state moves a GPU step time: throttling under load, the SM clock
    moving while busy (beyond SM_CLOCK_MOVE_PCT), other processes on the GPU."""
    if gpu is None:
        return []
    reasons = []
    if gpu.throttled:
        reasons.append(f"the GPU throttled ({', '.join(str(t) for t in gpu.throttled)})")
    low, high = gpu.sm_mhz_min, gpu.sm_mhz_max
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and high > 0:
        if (high - low) / high * 100 > SM_CLOCK_MOVE_PCT:
            reasons.append(f"the GPU's SM clock moved {low:.0f}–{high:.0f} MHz while it worked")
    others = gpu.other_processes
    if isinstance(others, int) and others > 0:
        reasons.append(f"{others} other process{'es' if others > 1 else ''} used the GPU")
    return reasons


def multi_threaded(steps: Sequence[Step]) -> bool:
    """Whether a measured step ran with more than one thread (`threads` unset: torch's
    default, one per core). On this project's 2-core runner, idle, the yardstick timed with
    2 threads drifted 23-47 % between processes (5 runs), with 1 thread 2-4 % (2 runs)."""
    return any(_several_threads(s.settings) for s in steps if not s.failed)


def cpu_multi_threaded(steps: Sequence[Step]) -> bool:
    """Whether a step measured on the CPU ran with more than one thread: then an unsteady
    run names threads: 1 whatever made it unsteady, the one cause of noise the user's config
    sets. Idle, on the 2-core runner, several threads alone made the yardstick drift 23-47 %
    (1 thread: 2-4 %). Under load one thread is no cure: with others taking 54-77 % of the
    CPU, a small MLP's A/A was ±6.5-404 % with 1 thread, ±13-59 % with 2 (3 runs each)."""
    return any(_several_threads(s.settings) for s in steps if not s.failed and s.device == "cpu")


def _several_threads(settings: Mapping[str, Any] | None) -> bool:
    threads = (settings or {}).get("threads")
    return threads is None or threads > 1


def _on_cores(cores: Any) -> str:
    return f" on {cores} cores" if isinstance(cores, int) else ""


HEALTH_PREFIX = "⚠️ run health"
UNSTEADY = "the machine was unsteady while this ran"


def health_line(document: ResultDocument) -> str | None:
    """The one line a report starts with when the run's machine was unsteady; else None."""
    parts = health_parts(document)
    if parts is None:
        return None
    reasons, consequence = parts
    return f"{HEALTH_PREFIX}: {UNSTEADY} — " + "; ".join(reasons) + consequence


def health_parts(document: ResultDocument) -> tuple[list[str], str] | None:
    """(why the machine was unsteady, what that means for the run), for a report that says
    the consequence once for several runs; None when the run was steady."""
    reasons = document.run_health.unsteady if document.run_health is not None else ()
    if not reasons:
        return None
    if document.pairing is not None:
        # Paired: head and base shared those minutes, and the gate judges the paired
        # differences with their own noise (gate/judges/speed.py, step_time_gate).
        consequence = (
            ". Its absolute times support no recommendation; head against base is judged on "
            "the paired differences, whose noise holds what the load did to both sides."
        )
    else:
        consequence = (
            ". Its step times are reported, not judged, and support no recommendation: rerun "
            "once those causes are gone, or in paired mode (run --against), where load both "
            "sides share cancels."
        )
    shown = [str(r) for r in reasons]
    if cpu_multi_threaded(document.steps) and not any(THREADS_HINT in r for r in shown):
        shown.append(
            "its CPU steps ran with several threads (threads unset or above 1), which alone "
            f"make a small machine's timings wander; {THREADS_HINT}"
        )
    return shown, consequence


def widest_aa_noise_pct(steps: Sequence[Step]) -> float | None:
    values = [step.eager.noise_pct for step in steps if not step.failed and step.eager]
    known = [float(v) for v in values if v is not None]
    return max(known) if known else None


def yardstick_drift_pct(steps: Sequence[Step]) -> float | None:
    """How far the yardstick's fastest time moved between the run's processes: its upper
    quartile over the processes ÷ its least − 1, in percent. Not the slowest process: in an
    idle demo run one process of 17 timed it at 0.41 ms against 0.27-0.28 ms for the rest
    (a hiccup of the host), which said 53 % of a run whose other 16 agreed within 5 %; with
    two busy loops a quarter of the processes and more run slow."""
    fastest = []
    for step in steps:
        records = list(step.eager.processes or ()) if step.eager is not None else []
        for variant in step.variants:
            records.extend(variant.processes or ())
        for record in records:
            value = record.fastest_ms.yardstick
            if value is not None and value > 0:
                fastest.append(float(value))
    if len(fastest) < 2:
        return None
    fastest.sort()
    upper_quartile = fastest[math.ceil(0.75 * len(fastest)) - 1]
    return (upper_quartile / fastest[0] - 1) * 100


def _over(value: object, limit: float) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and value > limit
