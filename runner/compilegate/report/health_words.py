"""Run health in words: why a run's machine was unsteady (results/run_health.py's causes),
each in full and in a few words, and the one line a report starts with when it was.

A document records the causes as facts (results/health_causes.py); an older one recorded
these full sentences, said as recorded. The few words head the first screen
(report/first_screen/), whose "Reading these numbers" says every cause in full.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..results.model import ResultDocument
from ..results.run_health import (
    AaDisagreed,
    GpuClockMoved,
    GpuShared,
    GpuThrottled,
    HypervisorStole,
    LoadOverCores,
    OthersTookCpu,
    RecordedCause,
    UnsteadyCause,
    YardstickDrifted,
    cpu_multi_threaded,
    unsteady_causes,
)

HEALTH_PREFIX = "⚠️ run health"
UNSTEADY = "the machine was unsteady while this ran"
# What every unsteady run whose CPU steps used several threads is told (health_line).
THREADS_HINT = "setting threads: 1 in the step's config steadies it"
SEVERAL_THREADS = (
    "its CPU steps ran with several threads (threads unset or above 1), which alone "
    f"make a small machine's timings wander; {THREADS_HINT}"
)
PAIRED_CONSEQUENCE = (
    ". Its absolute times support no recommendation; head against base is judged on "
    "the paired differences, whose noise holds what the load did to both sides."
)
CONSEQUENCE = (
    ". Its step times are reported, not judged, and support no recommendation: rerun "
    "once those causes are gone, or in paired mode (run --against), where load both "
    "sides share cancels."
)


@dataclass(frozen=True)
class SaidCause:
    """One cause as a report says it: in full, and in a few words (the first screen)."""

    full: str
    short: str
    names_threads: bool = False  # says THREADS_HINT already


def said(cause: UnsteadyCause) -> SaidCause:
    """The cause in full and in a few words: the few words are the full sentence without
    its parenthesis (the numbers behind it) or its explanation."""
    if isinstance(cause, OthersTookCpu):
        short = f"other processes took {cause.others_cpu_pct:.0f} % of its CPU"
        if cause.load_average is None:
            return SaidCause(short, short)
        return SaidCause(
            f"{short} (load average {cause.load_average:.1f} on {cause.cores} cores)", short
        )
    if isinstance(cause, LoadOverCores):
        return _plain(f"load average {cause.load_average:.1f} on {cause.cores} cores")
    if isinstance(cause, HypervisorStole):
        return _plain(f"the hypervisor stole {cause.steal_pct:.0f} % of its CPU")
    if isinstance(cause, GpuThrottled):
        return SaidCause(f"the GPU throttled ({', '.join(cause.reasons)})", "the GPU throttled")
    if isinstance(cause, GpuClockMoved):
        return _plain(
            f"the GPU's SM clock moved {cause.low_mhz:.0f}–{cause.high_mhz:.0f} MHz while it worked"
        )
    if isinstance(cause, GpuShared):
        many = cause.other_processes > 1
        return _plain(f"{cause.other_processes} other process{'es' if many else ''} used the GPU")
    if isinstance(cause, AaDisagreed):
        short = f"two identical copies of a step disagreed by up to ±{cause.noise_pct:.0f} %"
        return SaidCause(f"{short} (A/A)", short)
    if isinstance(cause, YardstickDrifted):
        return _drifted(cause)
    return _recorded(cause)


def _plain(sentence: str) -> SaidCause:
    return SaidCause(sentence, sentence)


def _drifted(cause: YardstickDrifted) -> SaidCause:
    # a process descheduled for whole blocks once timed it 221× its fastest: "22040 %"
    drift = cause.drift_pct
    size = f"{drift:.0f} %" if drift < 100 else f"{drift / 100 + 1:.3g}×"
    short = f"the yardstick drifted {size} between processes"
    full = f"{short} (a quarter or more)"
    if not cause.threads_on_idle:
        return SaidCause(full, short)
    on_cores = f" on {cause.cores} cores" if isinstance(cause.cores, int) else ""
    full += (
        " while nothing else was busy: it is timed with the steps' threads "
        f"(threads unset or above 1), and several threads{on_cores} wander "
        f"from process to process even on an idle machine; {THREADS_HINT}"
    )
    return SaidCause(full, short, names_threads=True)


def _recorded(cause: RecordedCause) -> SaidCause:
    """A sentence a document recorded without the numbers behind it: said as recorded, and
    in a few words up to its first parenthesis or colon, as this module words its own."""
    sentence = cause.sentence
    cuts = [at for at in (sentence.find(" ("), sentence.find(": ")) if at >= 0]
    short = sentence[: min(cuts)] if cuts else sentence
    return SaidCause(sentence, short, names_threads=THREADS_HINT in sentence)


def health_parts(document: ResultDocument) -> tuple[list[SaidCause], str] | None:
    """(why the machine was unsteady, what that means for the run), for a report that says
    the consequence once for several runs; None when the run was steady, and when every step
    raised: no step time was measured for the machine's state to qualify (issue 54,
    finding 10)."""
    if document.steps and all(step.failed for step in document.steps):
        return None
    causes = unsteady_causes(document.run_health) if document.run_health is not None else ()
    if not causes:
        return None
    # Paired: head and base shared those minutes, and the gate judges the paired
    # differences with their own noise (gate/judges/speed.py, step_time_gate).
    consequence = PAIRED_CONSEQUENCE if document.pairing is not None else CONSEQUENCE
    shown = [said(cause) for cause in causes]
    if cpu_multi_threaded(document.steps) and not any(s.names_threads for s in shown):
        shown.append(SaidCause(SEVERAL_THREADS, "its CPU steps ran with several threads", True))
    return shown, consequence


def health_line(document: ResultDocument) -> str | None:
    """The one line a report starts with when the run's machine was unsteady; else None."""
    said = health_after_prefix(document)
    return f"{HEALTH_PREFIX}{said}" if said is not None else None


def health_after_prefix(document: ResultDocument) -> str | None:
    """health_line after its HEALTH_PREFIX (`: the machine was unsteady — …`), for a report
    that names the runs it concerns before it; else None."""
    parts = health_parts(document)
    if parts is None:
        return None
    causes, consequence = parts
    return f": {UNSTEADY} — " + "; ".join(c.full for c in causes) + consequence
