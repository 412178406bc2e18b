"""A comparison's notes are values (gate/notes.py) and report/note_words.py words them: each
kind's sentence, and the verdict JSON's notes in words."""

from __future__ import annotations

from gate_docs import environment, judge_documents, result, step

from compilegate.gate.comparability import EnvironmentMismatch, Mismatch
from compilegate.gate.notes import (
    AskedSetting,
    CommandLineThresholdsNote,
    Difference,
    EnvironmentDifferenceNote,
    OtherClassNote,
    PairedNote,
    ThresholdsNotAppliedNote,
    UncheckedConfigNote,
)
from compilegate.gate.pairing import Pairing
from compilegate.report.note_words import note_words
from compilegate.report.verdict_json import verdict_json
from compilegate.results.machine import HardwareClass

PAIRING = Pairing("run-1", "main", "pr", "a" * 40, None, "A B B A")


def test_a_paired_note_names_both_sides_and_how_they_alternated():
    assert note_words(PairedNote(PAIRING, 1)) == (
        "paired: 1 pair, main `aaaaaaa`, pr (no commit), same machine, processes alternating "
        "A B B A: each head process judged against the base process next to it"
    )
    in_process = Pairing("run-1", "base", "head", None, "b" * 40, "A B", mode="in-process")
    assert note_words(PairedNote(in_process, None)).startswith(
        "paired: pairs, base (no commit), head `bbbbbbb`, same machine, base and head in one "
        "process, interleaved in the same rounds"
    )


def test_a_baseline_from_another_machine_is_said_with_both_classes():
    mismatch = EnvironmentMismatch(Mismatch.CPU_MODEL_UNRECORDED, "AMD EPYC", None)
    base = HardwareClass("cpu", cpu_model="AMD EPYC", cpu_count=2)
    cur = HardwareClass("cpu", cpu_model=None, cpu_count=16)
    assert note_words(OtherClassNote(mismatch, base, cur, same_device_type=True)) == (
        "baseline from another hardware class (CPU AMD EPYC (2 cores); this run: CPU (model "
        "not recorded) (16 cores)): judged only on what hardware does not move — graph "
        "breaks, recompiles, fallbacks to eager, DDP splits, numerics, torch settings, step "
        "work, compile work; not judged: step speed, step times, compile time (wall, CPU, "
        "instructions) and peak memory; record this class's own baseline: `compilegate baseline "
        "update` with a result measured on it writes the class's file beside the baseline "
        "(`BASELINE.cpu-unknown-cpu-16-cores.json`)"
    )


def test_environment_differences_that_stay_comparable():
    said = [
        note_words(EnvironmentDifferenceNote(what, base, cur))
        for what, base, cur in (
            (Difference.TORCH, "2.9.1", "2.10.0"),
            (Difference.DRIVER, None, "570.1"),
            (Difference.CUDA, "12.4", None),
            (Difference.HOST_CPU, "AMD", "Intel"),
            (Difference.CPU_COUNT, 8, None),
            (Difference.TORCH_THREADS, 4, 2),
        )
    ]
    assert said == [
        "torch 2.9.1 (baseline) vs 2.10.0 (this run): compared, since that difference is "
        "what an upgrade gate measures",
        "NVIDIA driver (not recorded) (baseline) vs 570.1 (this run): compared, like a torch "
        "upgrade; a change in step times may be the driver's",
        "CUDA 12.4 (baseline) vs (not recorded) (this run)",
        "host CPU AMD (baseline) vs Intel (this run)",
        "CPU count 8 (baseline) vs None (this run)",
        "torch threads 4 (baseline) vs 2 (this run)",
    ]


def test_thresholds_the_command_line_set_and_those_a_pull_request_asks_for():
    override = CommandLineThresholdsNote(
        (("speedup_drop_pct", 5.0), ("peak_memory_growth_pct", 2.5))
    )
    assert note_words(override) == (
        "thresholds set on the command line, for every step: speedup_drop_pct 5, "
        "peak_memory_growth_pct 2.5"
    )
    asked = ThresholdsNotAppliedNote(
        "train",
        (
            AskedSetting("speedup_drop_pct", 15.0, 5.0),
            AskedSetting("gate_compile_wall_time", True, False),
        ),
    )
    assert note_words(asked) == (
        "step train: this run's config asks for speedup_drop_pct 15 (applied: 5), "
        "gate_compile_wall_time True (applied: False); the gate applies the baseline's "
        "thresholds (the default branch's), so a pull request's config takes effect once it "
        "is merged and the baseline refreshed"
    )
    assert note_words(UncheckedConfigNote("train")) == (
        "step train: the baseline records neither settings nor a fingerprint; its "
        "configuration could not be checked"
    )


def test_the_verdict_json_gives_the_notes_in_words():
    report = judge_documents(result(env=environment(torch="2.9.1")), result(step()))
    (note,) = report.notes
    assert isinstance(note, EnvironmentDifferenceNote) and note.what is Difference.TORCH
    assert report.to_dict()["notes"] == [  # the values, tagged with their kind
        {
            "kind": "environment_difference",
            "what": "torch",
            "baseline": "2.9.1",
            "current": "2.10.0+cu128",
        }
    ]
    assert verdict_json(report)["notes"] == [note_words(note)]
