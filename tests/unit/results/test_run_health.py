"""Run health (results/run_health.py, run/machine_load.py): the machine's load and the run's
own signs of it, and the one line every report starts with when the run was unsteady."""

from __future__ import annotations

import itertools
from dataclasses import replace

from gate_docs import process, result, step, variant, with_processes

from compilegate.gate.run_set import RunSetVerdict, VersionOutcome
from compilegate.report.decision_words import decision_sentence
from compilegate.report.first_screen import FirstScreen
from compilegate.report.health_words import health_line
from compilegate.report.run_text import render_run_text
from compilegate.results.model import MachineHealth, parse, step_of
from compilegate.results.run_health import run_health
from compilegate.run.machine_load import CpuCounters, MachineLoad

QUIET = MachineHealth(cpu_count=2, load_average_mean=0.9, others_cpu_pct=3.0, steal_pct=0.0)
BUSY = MachineHealth(cpu_count=2, load_average_mean=3.4, others_cpu_pct=61.0, steal_pct=0.0)


def health(machine: MachineHealth, document: dict) -> dict:
    """The run health of a run that measured `document`'s steps, as the document records it."""
    return run_health(machine, steps_of(document)).to_json(as_recorded=True)


def steps_of(document: dict) -> list:
    """The document's steps, typed: what run health reads of a run as measured."""
    return [step_of(raw) for raw in document["steps"]]


def measured(yardsticks=(2.0, 2.0), aa_noise_pct=1.0, threads=None, device="cuda") -> dict:
    doc = step(
        variants=[variant()],
        eager_noise_pct=aa_noise_pct,
        settings={"threads": threads},
        device=device,
    )
    records = [process([10.0] * 5, [8.0] * 5, [y] * 5) for y in yardsticks]
    return result(with_processes(doc, records[:1], [records[1:]]))


def test_a_quiet_run_is_steady_and_says_nothing():
    document = measured()
    document["run_health"] = health(QUIET, document)
    assert document["run_health"]["unsteady"] == []
    assert health_line(parse(document, "r.json")) is None
    assert "run health" not in render_run_text(parse(document, "r.json"))


def test_a_busy_machine_a_wide_aa_or_a_drifting_yardstick_each_make_a_run_unsteady():
    for machine, document, said in (
        (BUSY, measured(), "other processes took 61 % of its CPU (load average 3.4 on 2 cores)"),
        (QUIET, measured(aa_noise_pct=235.0), "disagreed by up to ±235 % (A/A)"),
        (QUIET, measured(yardsticks=(2.0, 3.0)), "the yardstick drifted 50 % between processes"),
        (QUIET, measured(yardsticks=(2.0,) * 12 + (3.0,) * 5), "the yardstick drifted 50 %"),
        # a process descheduled for whole blocks (two busy loops, the demo): a factor
        (QUIET, measured(yardsticks=(0.27, 59.44)), "the yardstick drifted 220× between"),
        (
            replace(QUIET, others_cpu_pct=None, load_average_mean=3.5),
            measured(),
            "load average 3.5 on 2 cores",
        ),
        (replace(QUIET, steal_pct=12.0), measured(), "stole 12 %"),
    ):
        document["run_health"] = health(machine, document)
        line = health_line(parse(document, "r.json"))
        assert line is not None and said in line, line
        assert "step times are reported, not judged, and support no recommendation" in line
        paired = {**document, "pairing": {"id": "p", "role": "head"}}
        line = health_line(parse(paired, "r.json"))
        assert "paired differences" in line and "run --against" not in line


def test_a_drift_on_a_quiet_machine_with_several_threads_says_threads_1_steadies_it():
    """Idle, on the 2-core runner, the yardstick timed with 2 threads drifted 23-47 % between
    processes, with 1 thread 2-4 %: the line names the cause a user can change. Not when the
    machine was busy (the busy machine is the cause), nor for a one-thread run."""
    hint = "setting threads: 1 in the step's config steadies it"
    drifting = (2.0, 3.0)
    for machine, threads, said in (
        (QUIET, None, True),
        (QUIET, 2, True),
        (QUIET, 1, False),
        (BUSY, None, False),
        (replace(QUIET, steal_pct=12.0), None, False),
    ):
        document = measured(yardsticks=drifting, threads=threads)
        document["run_health"] = health(machine, document)
        line = health_line(parse(document, "r.json"))
        assert line is not None and "the yardstick drifted 50 %" in line, line
        assert (hint in line) == said, (machine, threads, line)
        # the advice never sends a run whose machine was quiet to "a quiet runner"
        assert "quiet runner" not in line and "rerun once those causes are gone" in line
        assert document["run_health"]["multi_threaded"] == (threads != 1)


def test_any_unsteady_run_of_a_multi_threaded_cpu_step_names_threads_1():
    """Busy machine, steal, a wide A/A or a drift: whatever made a run unsteady, a CPU step
    timed with several threads is told the one cause of noise its config sets. Never for a
    one-thread run, nor a GPU step's; said once where the drift already says it."""
    hint = "setting threads: 1 in the step's config steadies it"
    for machine, doc, said in (
        (BUSY, measured(device="cpu"), True),
        (BUSY, measured(device="cpu", threads=2), True),
        (replace(QUIET, steal_pct=12.0), measured(device="cpu"), True),
        (QUIET, measured(device="cpu", aa_noise_pct=235.0), True),
        (QUIET, measured(device="cpu", yardsticks=(2.0, 3.0)), True),
        (BUSY, measured(device="cpu", threads=1), False),
        (BUSY, measured(device="cuda"), False),
    ):
        doc["run_health"] = health(machine, doc)
        line = health_line(parse(doc, "r.json"))
        assert line is not None and line.count(hint) == int(said), (machine, line)
        if said and machine is BUSY:
            assert "its CPU steps ran with several threads (threads unset or above 1)" in line
            assert line.index(hint) < line.index(". Its step times are reported")
    quiet = measured(device="cpu")
    quiet["run_health"] = health(QUIET, quiet)
    assert health_line(parse(quiet, "r.json")) is None


def test_the_line_heads_the_terminal_table_and_the_pr_comment():
    document = measured()
    document["run_health"] = health(BUSY, document)
    table = render_run_text(parse(document, "r.json")).splitlines()
    said = [i for i, line in enumerate(table) if line.startswith("⚠️ run health: the machine")]
    assert len(said) == 1 and said[0] < table.index(
        next(x for x in table if x.startswith("  variant "))
    )
    run_set = RunSetVerdict(
        versions=(VersionOutcome("2.13.0", "r.json", document=parse(document, "r.json")),)
    )
    markdown = FirstScreen.of(run_set).markdown().splitlines()
    assert markdown[2].startswith("> ⚠️ run health: the machine was unsteady")


def test_the_sampler_counts_the_cpu_others_took_not_the_runs_own():
    """Counters: 2 cores for 10 s = 20 CPU seconds; the machine was busy 16 of them, this
    run's own processes 4: others took 12 of 20, 60 %."""
    counters = iter([CpuCounters(100.0, 0.0, 1000.0), CpuCounters(116.0, 1.0, 1020.0)])
    own = iter([50.0, 54.0])
    clock = itertools.count(0.0, 10.0)
    sampler = MachineLoad(
        clock=lambda: next(clock),
        read_counters=lambda: next(counters),
        read_load=lambda: 3.0,
        read_own_cpu=lambda: next(own),
        cpu_count=2,
    ).start()
    sampler.stop()
    summary = sampler.summary()
    assert summary.others_cpu_pct == 60.0 and summary.steal_pct == 5.0
    assert summary.load_average_mean == 3.0 and summary.seconds == 10.0


def test_children_in_containers_leave_the_share_of_others_unknown():
    counters = iter([CpuCounters(100.0, 0.0, 1000.0), CpuCounters(116.0, 0.0, 1020.0)])
    sampler = MachineLoad(children_local=False, read_counters=lambda: next(counters)).start()
    sampler.stop()
    assert sampler.summary().others_cpu_pct is None


def test_one_process_a_host_hiccup_slowed_does_not_make_a_run_unsteady():
    """An idle demo run: 16 of 17 processes timed the yardstick at 0.27-0.28 ms, one at
    0.41 ms. The upper quartile, not the slowest, is the run's drift."""
    document = measured(yardsticks=(0.27, 0.275, 0.28, 0.272) * 4 + (0.41,))
    document["run_health"] = health(QUIET, document)
    assert document["run_health"]["unsteady"] == [], document["run_health"]
    assert document["run_health"]["yardstick_drift_pct"] < 5


class _Machine:
    """What run/orchestrate.py's `_record_health` reads of a MachineLoad."""

    def __init__(self, summary: MachineHealth) -> None:
        self._summary = summary

    def stop(self) -> None:
        pass

    def summary(self) -> MachineHealth:
        return self._summary


class _Record:
    """A step record as run health reads it (results/step_record.StepRecord), over JSON."""

    def __init__(self, raw: dict) -> None:
        self.raw = raw

    def as_step(self):
        return step_of(self.raw)

    @property
    def recommendation(self):
        return self.as_step().recommendation

    def with_recommendation(self, recommendation) -> None:
        self.raw["recommendation"] = recommendation.to_json(as_recorded=True)


class _Side:
    def __init__(self, document: dict) -> None:
        self.head = document
        self.steps = [_Record(raw) for raw in document["steps"]]
        self.health = None

    @property
    def document(self) -> dict:
        return {**self.head, "run_health": self.health.to_json(as_recorded=True)}


def decided(document: dict) -> dict:
    document["steps"][0]["recommendation"] = {
        "decision": "stay_eager",
        "variant": "default",
        "caveats": [],
        "steps_per_run": 10000,
        "speedup": {
            "estimate": 0.73,
            "low": 0.65,
            "high": 0.82,
            "estimator": "mean_over_processes",
        },
        "break_even_steps": None,
        "warm_break_even_steps": None,
        "saving_s": None,
        "processes_needed": None,
    }
    return document


def test_an_unsteady_run_gives_no_recommendation_and_says_what_it_measured():
    """The demo on a loaded runner said "stay eager" under a health line saying its step
    times support no recommendation: now the decision is withheld, in the document."""
    from compilegate.run.orchestrate import _record_health

    busy, quiet = _Side(decided(measured())), _Side(decided(measured()))
    _record_health([busy], _Machine(BUSY), None)  # type: ignore[list-item, arg-type]
    _record_health([quiet], _Machine(QUIET), None)  # type: ignore[list-item, arg-type]
    withheld = busy.document["steps"][0]["recommendation"]
    assert withheld["decision"] == "undecided" and withheld["withheld"] == "unsteady_machine"
    assert withheld["withheld_decision"] == {"decision": "stay_eager"}
    assert "text" not in withheld  # facts in the document, words in the report (issue 53)
    said = decision_sentence(parse(busy.document, "unsteady.json").steps[0])
    assert said is not None and said.startswith("no recommendation: the machine was unsteady")
    assert "measured: keep torch.compile off: no variant beats eager (best default" in said
    assert withheld["speedup"]["high"] == 0.82  # the figures stay for the reports
    parse(busy.document, "unsteady.json")  # still a valid result document
    assert parse(busy.document, "unsteady.json").steps[0].recommendation.withheld
    assert quiet.document["steps"][0]["recommendation"]["decision"] == "stay_eager"
    first = render_run_text(parse(busy.document, "r.json")).splitlines()[0]
    assert "no recommendation: the machine was unsteady (run health)" in first, first
    assert "stay eager" not in render_run_text(parse(busy.document, "r.json"))


def test_each_cause_in_a_few_words_is_what_a_recorded_sentence_of_it_says_in_a_few():
    """The first screen says a cause in a few words from its facts (report/health_words.py);
    a document that recorded only sentences (by hand, another compilegate) is said in the
    few words before its first parenthesis or colon: both say one thing."""
    from compilegate.report.health_words import said
    from compilegate.results.run_health import (
        AaDisagreed,
        GpuClockMoved,
        GpuShared,
        GpuThrottled,
        HypervisorStole,
        LoadOverCores,
        OthersTookCpu,
        RecordedCause,
        YardstickDrifted,
    )

    expected = {
        OthersTookCpu(61.0, 3.4, 2): "other processes took 61 % of its CPU",
        OthersTookCpu(61.0, None, 2): "other processes took 61 % of its CPU",
        LoadOverCores(3.5, 2): "load average 3.5 on 2 cores",
        HypervisorStole(12.0): "the hypervisor stole 12 % of its CPU",
        GpuThrottled(("software power cap",)): "the GPU throttled",
        GpuClockMoved(1410.0, 1980.0): "the GPU's SM clock moved 1410–1980 MHz while it worked",
        GpuShared(2): "2 other processes used the GPU",
        AaDisagreed(235.0): "two identical copies of a step disagreed by up to ±235 %",
        YardstickDrifted(22040.0, False, 2): "the yardstick drifted 221× between processes",
        YardstickDrifted(50.0, True, 2): "the yardstick drifted 50 % between processes",
    }
    for cause, short in expected.items():
        words = said(cause)
        assert words.short == short and words.full.startswith(short), words
        assert said(RecordedCause(words.full)) == words, words
