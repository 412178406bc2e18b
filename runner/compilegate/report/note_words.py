"""Every word of a comparison's notes (gate/notes.py): what a reader should know besides
its rows, shown above the gate's table, under the run's text and in the verdict JSON."""

from __future__ import annotations

from ..gate.class_baselines import class_baseline_name
from ..gate.notes import (
    CommandLineThresholdsNote,
    Difference,
    EnvironmentDifferenceNote,
    Note,
    OtherClassNote,
    PairedNote,
    ProbeOverruledNote,
    ThresholdsNotAppliedNote,
    UncheckedConfigNote,
)
from ..gate.pairing import Pairing
from ..gate.policy import AdoptedPower
from .row_words.comparability import NOT_RECORDED_WORDS, other_class_words

_LABELS = {
    Difference.CUDA: "CUDA",
    Difference.HOST_CPU: "host CPU",
    Difference.CPU_COUNT: "CPU count",
    Difference.TORCH_THREADS: "torch threads",
}


# run/machine_reading.CLASS_FIELDS, as a reader names them
_CLASS_FIELD_NAMES = {
    "device": "device type",
    "gpu_name": "GPU model",
    "gpu_count": "GPU count",
    "cpu_model": "CPU model",
    "cpu_count": "CPU core count",
}


def note_words(note: Note) -> str:
    """The sentence that says what this note records."""
    if isinstance(note, PairedNote):
        return paired_words(note.pairing, note.pairs)
    if isinstance(note, OtherClassNote):
        classes = other_class_words(note.baseline_class, note.current_class, note.same_device_type)
        return (
            f"{classes}; record this class's own baseline: `compilegate baseline update` "
            "with a result measured on it writes the class's file beside the baseline "
            f"(`{class_baseline_name('BASELINE.json', note.current_class)}`)"
        )
    if isinstance(note, ProbeOverruledNote):
        names = [_CLASS_FIELD_NAMES.get(name, name) for name in note.fields]
        said = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        differ = "differ" if len(names) > 1 else "differs"
        return (
            f"the {said} the measuring interpreter reported {differ} from what compilegate "
            "read on this machine; the result records compilegate's reading, and the baseline "
            "and what is judged follow it (a pull request's packages run in that interpreter)"
        )
    if isinstance(note, EnvironmentDifferenceNote):
        return _difference_words(note)
    if isinstance(note, CommandLineThresholdsNote):
        shown = ", ".join(f"{name} {value:g}" for name, value in note.thresholds)
        return f"thresholds set on the command line, for every step: {shown}"
    if isinstance(note, UncheckedConfigNote):
        return (
            f"step {note.step}: the baseline records neither settings nor a fingerprint; "
            "its configuration could not be checked"
        )
    if isinstance(note, ThresholdsNotAppliedNote):
        asked = ", ".join(
            f"{a.name} {a.asked} (applied: {a.applied})"
            if isinstance(a.asked, bool)
            else f"{a.name} {a.asked:g} (applied: {a.applied:g})"
            for a in note.asked
        )
        return (
            f"step {note.step}: this run's config asks for {asked}; the gate applies the "
            "baseline's thresholds (the default branch's), so a pull request's config takes "
            "effect once it is merged and the baseline refreshed"
        )
    raise TypeError(f"no words for a {type(note).__name__}")


def notes_words(notes: tuple[Note, ...]) -> list[str]:
    return [note_words(note) for note in notes]


def adopted_power_words(adopted: AdoptedPower) -> str:
    """The run's note for a step measured with the baseline's power (`compilegate run
    --baseline`): "step train: measured with the baseline's iterations 40 (config: 10): …"."""
    shown = ", ".join(
        f"{setting.name} {setting.baseline} (config: {setting.config})"
        for setting in adopted.settings
    )
    return (
        f"step {adopted.step}: measured with the baseline's {shown}: what the gate measures, "
        "and with what power, comes from the baseline, not from this config"
    )


def paired_summary(paired: PairedNote) -> str:
    """How a comparison was paired, for the first screen: "paired, 4 pairs, same machine"."""
    how = ", in one process" if paired.pairing.mode == "in-process" else ""
    if paired.pairs:
        return f"paired, {_pairs(paired.pairs)}{how}, same machine"
    return f"paired{how}, same machine"


def paired_words(pairing: Pairing, pairs: int | None) -> str:
    """The comparison's first note: "paired: 4 pairs, base `abc1234`, head `def5678`,
    same machine, …"."""
    counted = _pairs(pairs) if pairs else "pairs"
    sides = (
        f"{pairing.base_label} {_short(pairing.base_commit)}, "
        f"{pairing.head_label} {_short(pairing.head_commit)}"
    )
    if pairing.mode == "in-process":
        return (
            f"paired: {counted}, {sides}, same machine, base and head in one process, "
            "interleaved in the same rounds (cold compiles alternating): each head "
            "timing judged against the base's from the same process"
        )
    return (
        f"paired: {counted}, {sides}, same machine, processes alternating {pairing.order}: "
        "each head process judged against the base process next to it"
    )


def _difference_words(note: EnvironmentDifferenceNote) -> str:
    base, cur = note.baseline, note.current
    if note.what is Difference.TORCH:
        return (
            f"torch {base} (baseline) vs {cur} (this run): "
            "compared, since that difference is what an upgrade gate measures"
        )
    if note.what is Difference.DRIVER:
        return (
            f"NVIDIA driver {base or NOT_RECORDED_WORDS} (baseline) vs "
            f"{cur or NOT_RECORDED_WORDS} (this run): compared, like a torch upgrade; "
            "a change in step times may be the driver's"
        )
    if note.what in (Difference.CUDA, Difference.HOST_CPU):
        cur = cur or NOT_RECORDED_WORDS
    return f"{_LABELS[note.what]} {base} (baseline) vs {cur} (this run)"


def _pairs(count: int) -> str:
    return "1 pair" if count == 1 else f"{count} pairs"


def _short(commit: str | None) -> str:
    return f"`{commit[:7]}`" if commit else "(no commit)"
