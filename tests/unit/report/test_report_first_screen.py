"""The first screen of the PR comment (everything before the first <details>) and its terminal
twin: issue 15's problems 1–7, each asserted on what a reader sees. Only the public renderers
are used (render_comment, render_run_set_text, the CLI), so these fail on the old output."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest
from gate_docs import environment, result, site, step, variant
from report_runs import failing_rows, hostile, judge, two_by_three
from said_rows import said_row, with_said_words  # noqa: F401

from compilegate.cli import build_parser
from compilegate.gate.judges.speed_facts import SpeedFacts, Statistic
from compilegate.gate.run_set import RunSetVerdict, VersionOutcome
from compilegate.gate.verdict import EnvironmentSummary, MetricVerdict, Verdict, VerdictReport
from compilegate.report.comment import render_comment
from compilegate.report.links import LinkContext
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.tables import display_width
from compilegate.results.model import parse

METRIC_WORDS = {
    "compile_s": "compile time (wall)",
    "compile_cpu_s": "compile time (CPU)",
    "compile_work": "compile work",
    "compiled_step_ms": "compiled step time",
    "compiled_step_ms_p25": "compiled step time, 25th percentile",
    "eager_step_ms_p25": "eager step time, 25th percentile",
    "speedup": "speedup vs eager",
    "graph_break_sites": "graph breaks",
    "eager_step_ms": "eager step time",
    "recompiles": "recompiles",
    "numerics": "numerics",
}
STEP = {"compile_target": "step"}
INTERNAL_NAMES = ("graph_break_sites", "exit 1", "default+step", "compile_s", "eager_step_ms")

# The hand-made rows here are worded by their facts (said_rows.py).
pytestmark = pytest.mark.usefixtures("with_said_words")


def comment(run_set, **kwargs) -> str:
    """The comment, its no-break spaces (number and unit) read as spaces."""
    return render_comment(run_set, **kwargs).replace("\u00a0", " ")


def first_screen(markdown: str) -> str:
    return markdown.split("<details>", 1)[0]


def reading_these_numbers(markdown: str) -> str:
    """The small print: the first <details>, closed, right after the first screen."""
    section = markdown.split("<details><summary>Reading these numbers</summary>", 1)[1]
    return section.split("</details>", 1)[0]


def plain(text: str) -> str:
    """Markdown escapes and the invisible joiner removed: what the reader reads."""
    return re.sub(r"\\(.)", r"\1", text.replace("\u2060", ""))


# -- 1. the headline and the first screen agree; every failing row is on it ---------------------


def test_first_screen_names_every_failing_and_inconclusive_row(tmp_path: Path):
    run_set = two_by_three(tmp_path)
    screen = first_screen(comment(run_set))
    rows = failing_rows(run_set)
    assert len(rows) >= 4
    table = [line for line in screen.splitlines() if line.startswith("| 2.")]
    for version, row in rows:
        torch = version.torch.split("+")[0]
        where = (
            row.step if row.variant in (None, "default") else f"{row.step} · default, whole step"
        )
        assert any(
            torch in line and where in line and METRIC_WORDS[row.metric] in line for line in table
        ), (torch, where, row.metric)


def test_headline_names_what_failed_where_and_what_did_not_move(tmp_path: Path):
    baseline = result(step("transformer"), env=environment(commit="c0ffee1"))
    new_break = result(
        step("transformer", variants=[variant(sites=[site("model.py", 42, "print")])]),
        env=environment(commit="c0ffee2"),
    )
    markdown = comment(judge(tmp_path, baseline, **{"torch-2.10.0": new_break}))
    headline = markdown.splitlines()[0]
    assert headline.startswith("### ❌ compilegate fails on graph breaks only in transformer")
    assert "torch 2.10.0" in headline
    unchanged = headline.split(";")[1]
    assert unchanged.endswith(" unchanged")
    for family in ("step speed", "recompiles", "numerics", "memory"):
        assert family in unchanged
    assert "exit" not in headline


# -- 2. noise and load are said where they decide ---------------------------------------------


def _version(rows: list[MetricVerdict], commits: tuple[str, str] = ("a", "b")) -> VersionOutcome:
    env = EnvironmentSummary(torch="2.13.0", device="cpu", commit=commits[0])
    report = VerdictReport(tuple(rows), env, dataclasses.replace(env, commit=commits[1]))
    document = result(step("train"), env=environment(torch="2.13.0", commit=commits[1]))
    typed = parse(document, "result.json")
    return VersionOutcome("torch 2.13.0", "result.json", document=typed, verdict=report)


def _row(metric: str, verdict: str, unit: str = "s", **fields) -> MetricVerdict:
    base = {"baseline": 10.0, "current": 20.0, "change": 100.0, "change_unit": "pct"}
    return said_row(metric, verdict, "msg", unit=unit, **{**base, **fields})


def test_a_failure_on_the_baseline_code_and_torch_says_rerun(tmp_path: Path):
    screen = plain(first_screen(comment(two_by_three(tmp_path))))
    assert "Torch 2.13.0 measured the baseline's own commit on the baseline's torch" in screen
    assert "Rerun before acting on it" in screen
    assert "compilegate baseline update --result" in screen  # when the change is intended


def test_a_compile_time_failure_without_noise_says_so_and_what_to_do():
    rows = [_row("compile_s", "regression", threshold=25.0)]
    screen = plain(first_screen(comment(RunSetVerdict((_version(rows, ("a", "a")),), "b.json"))))
    assert "Compile time (wall) on torch 2.13.0 has no noise estimate" in screen
    assert "rerun to see whether it repeats" in screen
    assert "Torch 2.13.0 measured the baseline's own commit on the baseline's torch" in screen
    assert "compilegate baseline update --result result.json --baseline b.json" in screen


def test_wall_compile_time_that_moved_alone_is_called_load():
    rows = [
        _row("compile_s", "regression", threshold=25.0),
        _row("compile_cpu_s", "pass", baseline=9.0, current=9.1, change=1.0),
        _row("compile_work", "pass", unit="count", change=0.0, change_unit="count"),
    ]
    screen = plain(first_screen(comment(RunSetVerdict((_version(rows),), "b.json"))))
    assert "the compile's wall time moved, but its CPU time and work counts did not" in screen
    assert "load on the runner is the likelier cause. Rerun." in screen


# -- 3. one speed per variant, its estimator named once -----------------------------------------


def test_one_speed_per_variant_with_its_estimator_named_once(tmp_path: Path):
    markdown = comment(two_by_three(tmp_path))
    assert markdown.count("Compiled vs eager:") == 1
    assert markdown.count("eager ÷ compiled median step time") == 1
    assert "Δ speedup" not in markdown
    # the first screen's speed for 2.4.1's transformer is the variant table's
    screen_row = next(
        line for line in markdown.splitlines() if line.startswith("| 2.4.1 | transformer")
    )
    assert "1.25× (1.24–1.26) default: faster" in screen_row
    assert "| transformer · default | 1.25× (1.24–1.26): faster |" in markdown


def test_the_decision_s_own_speed_is_the_variant_s_speed(tmp_path: Path):
    """A decision (issue 17's recommendation) that quotes an estimate: that one is shown, and
    the in-process ratio of the same variant nowhere."""
    chosen = step("mlp", variants=[variant(speedup=1.31, speedup_half_width_pct=3)])
    chosen["recommendation"] = {  # the shape of the shared contract (issue 17 writes it)
        "decision": "compile",
        "variant": "default",
        "text": "use default",
        "steps_per_run": 20000,
        "speedup": {
            "estimate": 1.40,
            "low": 1.11,
            "high": 1.77,
            "estimator": "mean over processes",
        },
        "break_even_steps": {"estimate": 3120.0, "low": 2400.0, "high": 4800.0},
        "warm_break_even_steps": None,
        "saving_s": {"estimate": 840.0, "low": 500.0, "high": 1000.0},
        "processes_needed": None,
    }
    markdown = comment(judge(tmp_path, None, **{"torch-2.13.0": result(chosen)}))
    assert "1.40× (1.11–1.77) default: faster" in markdown
    assert "1.31" not in markdown
    assert "after 3,100 steps (2,400–4,800 steps); saves ~14 min in a 20,000-step run" in plain(
        markdown
    )
    assert "5,000" not in markdown  # the variant's own break-even would be a second answer
    assert markdown.count("mean over processes") == 1


def _payoff(decision: str, estimate: float, low: float, high: float, steps: float | None):
    return {
        "decision": decision,
        "steps_per_run": 20000,
        "speedup": {
            "estimate": estimate,
            "low": low,
            "high": high,
            "estimator": "mean per process",
        },
        "break_even_steps": None
        if steps is None
        else {"estimate": steps, "low": steps * 0.8, "high": steps * 1.5},
        "warm_break_even_steps": None,
        "saving_s": None,
        "processes_needed": None,
    }


def test_every_variant_s_speed_is_its_payoff_when_the_result_has_one(tmp_path: Path):
    """Issue 17's per-variant payoff: one estimator for every variant, the in-process ratio
    of medians nowhere."""
    fast = variant(speedup=1.29, payoff=_payoff("compile", 1.52, 1.31, 1.77, 3120.0))
    slow = variant(
        "default+step",
        **STEP,
        speedup=0.97,
        payoff=_payoff("stay_eager", 1.04, 1.01, 1.08, 48000.0),
    )
    chosen = step("mlp", variants=[fast, slow])
    chosen["recommendation"] = {**fast["payoff"], "variant": "default", "text": "compile"}
    markdown = comment(judge(tmp_path, None, **{"torch-2.13.0": result(chosen)}))
    assert "| mlp · default | 1.52× (1.31–1.77): faster |" in markdown
    assert "| mlp · default, whole step | 1.04× (1.01–1.08): faster |" in markdown
    assert "48,000 steps (38,000–72,000 steps), beyond a 20,000-step run: stay eager" in markdown
    assert "1.29" not in markdown and "0.97" not in markdown
    assert markdown.count("mean per process") == 1


# -- 4. the tables fit: few columns, none constant -------------------------------------------


def test_tables_are_narrow_and_leave_out_constant_columns(tmp_path: Path):
    markdown = comment(two_by_three(tmp_path))
    headers = [
        line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line
    ]
    widths = {line.count(" | ") + 1 for line in headers}
    assert max(widths) <= 7, widths
    variant_header = next(line for line in headers if line.startswith("| step · variant"))
    assert "numerics" not in variant_header and "peak memory" not in variant_header
    assert "Same on every row: numerics: pass; peak memory: 1.9 GiB." in markdown


# -- 5. units, words and icons -------------------------------------------------------------


def test_words_units_and_icons_have_one_meaning(tmp_path: Path):
    markdown = comment(two_by_three(tmp_path))
    screen = first_screen(markdown)
    assert "✅" not in markdown  # a pass is the word, never a celebration
    for name in INTERNAL_NAMES:
        assert name not in plain(screen), name
    for line in markdown.splitlines():
        if "❌" in line:
            assert "pass" not in line.split("❌")[1].split("|")[0], line
    assert (
        "| 2.4.1 | transformer · default, whole step | ❌ speedup vs eager | 1.25× → 0.92× "
        "| −26 % | −5 % | ±4.1 % |" in screen
    )


def test_break_even_says_steps_and_is_not_given_for_a_variant_that_may_be_slower(tmp_path: Path):
    unclear = step("transformer", variants=[variant(speedup=1.32, speedup_half_width_pct=50)])
    markdown = comment(judge(tmp_path, None, **{"torch-2.13.0": result(unclear)}))
    assert "5,000" not in markdown
    assert "unclear: may be slower" in markdown
    for number in re.findall(r"\b\d{1,3}(?:,\d{3})+\b(?! steps)", markdown):
        pytest.fail(f"a count of steps without its unit: {number}")


def test_unjudgeable_noise_is_words_and_step_times_are_milliseconds():
    rows = [
        _row(
            "speedup",
            "inconclusive",
            unit="x",
            baseline=0.62,
            current=0.84,
            change=36.4,
            noise_pct=523.9,
            threshold=5.0,
            direction="higher_is_better",
            decidable=False,  # as the gate marks it: ±524 % cannot decide 5 %
        ),
        _row(
            "compiled_step_ms",
            "regression",
            unit="yardsticks",
            baseline=19.2,
            current=23.0,
            change=19.8,
            noise_pct=4.6,
            threshold=5.0,
            normalisation="yardstick",
        ),
    ]
    rows[1] = dataclasses.replace(
        rows[1],
        facts=SpeedFacts(
            Statistic.FASTEST,
            Verdict.REGRESSION,
            processes=(4, 4),
            raw_ms=(10.9, 12.5),
            raw_change_pct=14.7,
        ),
    )
    markdown = comment(RunSetVerdict((_version(rows),), "b.json"))
    screen = first_screen(markdown)
    assert "too noisy to judge" in screen and "523" not in markdown.split("every gate row")[0]
    assert "10.9 ms → 12.5 ms" in screen and "yardsticks" not in screen
    # the normalisation is explained once, in the small print closed below the first screen
    assert "the yardstick" in reading_these_numbers(markdown)
    # the gate's estimator for changes is named too, apart from the compiled-vs-eager one
    assert "compare each process's fastest iterations" in reading_these_numbers(markdown)


# -- 6. context: commits, versions, runner, links; a reproduction that works ---------------------


def test_context_names_commits_versions_runner_and_links(tmp_path: Path):
    links = LinkContext(
        "https://git.example", "acme/trainer", "0123456789abcdef", run_id="42", runner="gpu-1"
    )
    screen = first_screen(comment(two_by_three(tmp_path), links=links))
    assert (
        "**head** [`0123456`](https://git.example/acme/trainer/commit/0123456789abcdef)" in screen
    )
    assert (
        "**baseline** [`c0ffee1`](https://git.example/acme/trainer/commit/c0ffee1) (torch 2.13.0)"
        in screen
    )
    assert "runner gpu-1: NVIDIA H200" in screen
    assert "**torch** 2.4.1, 2.13.0" in screen
    assert "2.4.1: an upgrade check against the baseline's torch" in screen
    for label, url in (("run", ""), ("job summary", ""), ("artifacts", "#artifacts")):
        assert f"[{label}](https://git.example/acme/trainer/actions/runs/42{url})" in screen


def test_links_come_from_the_github_actions_environment(tmp_path: Path):
    env = {
        "GITHUB_SERVER_URL": "https://git.example",
        "GITHUB_REPOSITORY": "acme/trainer",
        "GITHUB_SHA": "0123456789abcdef",
        "GITHUB_RUN_ID": "42",
        "RUNNER_NAME": "gpu-1",
    }
    links = LinkContext.from_environ(env)
    assert links.run_url == "https://git.example/acme/trainer/actions/runs/42"
    assert links.runner == "gpu-1"
    assert LinkContext.from_environ({"GITHUB_RUN_ID": "4; rm -rf /"}).run_links() == []


def test_reproduce_commands_parse_and_need_nothing_from_the_runner(tmp_path: Path):
    markdown = comment(two_by_three(tmp_path))
    block = markdown.split("reproduce locally</summary>", 1)[1].split("```sh\n", 1)[1]
    commands = block.split("```", 1)[0].splitlines()
    assert commands[0] == "git checkout c0ffee1"
    parser = build_parser()
    for command in commands:
        if command.startswith("compilegate "):
            args = parser.parse_args(shlex.split(command)[1:])
            assert args.command in ("run", "compare")
    run = next(c for c in commands if c.startswith("compilegate run"))
    assert "--baseline" not in run and "--out result.json" in run
    assert "compilegate baseline fetch --artifact NAME --out baseline.json" in markdown


# -- 7. the terminal: the same first screen, lines that fit ------------------------------------


COMMAND_PREFIXES = ("compilegate ", "git ", "python -m venv ")


def long_lines(text: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if display_width(line) > 100 and not line.strip().startswith(COMMAND_PREFIXES)
    ]


def test_terminal_lines_fit_100_columns_except_commands(tmp_path: Path):
    for run_set in (two_by_three(tmp_path / "a"), hostile(tmp_path / "b")):
        assert long_lines(render_run_set_text(run_set)) == []


def test_terminal_first_screen_says_what_the_comment_says(tmp_path: Path):
    run_set = two_by_three(tmp_path)
    text = render_run_set_text(run_set)
    markdown = plain(first_screen(comment(run_set)))
    headline = markdown.splitlines()[0].removeprefix("### ")
    words = " ".join(text.split("== torch")[0].split())
    assert words.startswith(headline)
    for _version, row in failing_rows(run_set):  # a cell may wrap: word by word
        assert all(word in words.split() for word in METRIC_WORDS[row.metric].split()), row
    for sentence in re.findall(r"^> (.*?)(?:<br>|$)", markdown, re.M):
        assert " ".join(sentence.split()) in words, sentence


def test_compare_and_report_print_the_same_first_screen(tmp_path: Path, capsys):
    from compilegate.cli import main

    run_set = two_by_three(tmp_path)
    version = next(v for v in run_set.versions if v.torch.startswith("2.4.1"))
    baseline = str(tmp_path / "baseline.json")
    main(["compare", "--baseline", baseline, "--result", version.source])
    compared = capsys.readouterr().out
    main(["report", "--baseline", baseline, "--result", version.source, "--format", "text"])
    reported = capsys.readouterr().out
    assert compared.split("\n== ")[0] == reported.split("\n== ")[0]
    assert compared.startswith("❌ compilegate fails on step speed")
    assert long_lines(compared) == []


def test_new_gate_rows_read_as_words_and_ungated_rows_decide_nothing():
    """Issue 14's rows: compile CPU time and work counts, a percentile of step time, and a
    wall compile time the baseline's policy does not gate."""
    rows = [
        _row("compile_cpu_s", "regression", threshold=50.0, noise_pct=12.0),
        _row("compiled_step_ms_p25", "inconclusive", unit="ms", noise_pct=30.0, threshold=5.0),
        _row("compile_s", "pass", baseline=10.0, current=35.0, change=250.0, threshold=25.0),
    ]
    rows[2] = dataclasses.replace(rows[2], gated=False) if hasattr(rows[2], "gated") else rows[2]
    markdown = comment(RunSetVerdict((_version(rows),), "b.json"))
    screen = first_screen(markdown)
    assert "❌ compile time (CPU)" in screen
    assert "⚠️ compiled step time, 25th percentile" in screen
    assert markdown.splitlines()[0].startswith("### ❌ compilegate fails on compile time only")
    if hasattr(rows[2], "gated"):
        assert "| compile time (wall) | 10.0 s → 35.0 s | +250 % | +25 % |" in markdown
        assert "reported, not gated |" in markdown


def test_the_run_table_fits_100_columns(repo_root: Path):
    """`compilegate run` prints the result table: its step headers and notes wrap too."""
    from compilegate.report.run_text import render_run_text, step_decision

    paths = sorted((repo_root / "examples" / "report" / "results").glob("*/result.json"))
    assert len(paths) == 2  # the example's two torch versions
    for path in paths:
        document = parse(json.loads(path.read_text(encoding="utf-8")), str(path))
        text = render_run_text(document)
        assert long_lines(text) == [], path
        flat = " ".join(text.split())
        for typed_step in document.steps:  # each step's decision is still there, whole
            assert f"→ {step_decision(typed_step)}" in flat, typed_step.name


def test_terminal_output_never_carries_control_characters(tmp_path: Path):
    """An exception message from user code must not rewrite the reader's terminal."""
    escape = "boom \x1b[2J\x1b]0;owned\x07 \x9b31m"
    broken = result(step(variants=[variant(status="error", error=escape)]))
    run_set = judge(tmp_path, result(), **{"torch-2.10.0": broken})
    text = render_run_set_text(run_set)
    assert "boom" in text and not any(c in text for c in "\x1b\x07\x9b")


def test_a_refresh_command_that_could_end_a_code_span_is_plain_text(tmp_path: Path):
    run_set = two_by_three(tmp_path / "a`b")
    markdown = comment(run_set)
    assert "`compilegate baseline update" not in markdown
    assert "compilegate baseline update --result" in plain(markdown)


def test_the_run_table_shows_the_speed_the_decision_uses(repo_root: Path):
    """`compilegate run` printed the first process's median ratio (1.30x) beside a decision
    that quoted 0.88x for the same variant: one speed per variant, the payoff's."""
    from compilegate.report.run_text import render_run_text
    from compilegate.report.speeds import variant_speed

    path = repo_root / "examples" / "report" / "results" / "torch-2.13.0" / "result.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    for step_doc in raw["steps"]:
        one_step = parse({**raw, "steps": [step_doc]}, str(path))
        typed_step = one_step.steps[0]
        for typed_variant in typed_step.variants:
            speed = variant_speed(typed_step, typed_variant)
            assert speed is not None and speed.estimator != "in_process_median"
            row = next(
                line
                for line in render_run_text(one_step).splitlines()
                if line.strip().startswith(typed_variant.id + " ")
            )
            assert speed.text().split(" ")[0] in row, (typed_variant.id, row)
