"""`compilegate compare` and `compilegate baseline update`: exit codes and one-line errors."""

from __future__ import annotations

import argparse
import io
import json

import pytest
from gate_docs import environment, result, step, variant

from compilegate.cli.gate_commands import add_parser, parse_threshold_args
from compilegate.errors import BaselineError, CompilegateError, UsageError
from compilegate.report.judge_and_render import compare_and_report


def parser():
    top = argparse.ArgumentParser(prog="compilegate")
    add_parser(top.add_subparsers(dest="command", required=True))
    return top


def invoke(*argv):
    """Parse and call the handler the way cli.main() does: errors become (code, one line)."""
    args = parser().parse_args([str(a) for a in argv])
    try:
        return args.func(args), None
    except CompilegateError as exc:
        return exc.exit_code, str(exc)


def write(path, document):
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture
def baseline(tmp_path):
    return write(tmp_path / "baseline.json", result())


def test_compare_identical_exits_0_and_prints_the_table(tmp_path, baseline, capsys):
    res = write(tmp_path / "result.json", result())
    code, error = invoke("compare", "--baseline", baseline, "--result", res)
    assert (code, error) == (0, None)
    assert capsys.readouterr().out.startswith("compilegate passes: step speed, compile time")


def test_compare_regression_exits_1_and_writes_verdict_json(tmp_path, baseline, capsys):
    res = write(tmp_path / "result.json", result(step(variants=[variant(speedup=1.0)])))
    out = tmp_path / "out" / "verdict.json"
    code, _ = invoke("compare", "--baseline", baseline, "--result", res, "--out", out)
    assert code == 1
    verdict = json.loads(out.read_text())
    assert verdict["overall"] == "regression" and verdict["exit_code"] == 1
    assert [p.name for p in out.parent.iterdir()] == ["verdict.json"]  # no temp file left
    assert capsys.readouterr().out.startswith("❌ compilegate fails on step speed only in train")


def test_compare_run_error_exits_3(tmp_path, baseline):
    failed = result(step(status="error", error="child crashed", variants=[]))
    code, _ = invoke(
        "compare", "--baseline", baseline, "--result", write(tmp_path / "r.json", failed)
    )
    assert code == 3


def test_compare_json_and_markdown_formats(tmp_path, baseline, capsys):
    res = write(tmp_path / "result.json", result())
    invoke("compare", "--baseline", baseline, "--result", res, "--format", "json")
    assert json.loads(capsys.readouterr().out)["overall"] == "pass"
    invoke("compare", "--baseline", baseline, "--result", res, "--format", "markdown")
    markdown = capsys.readouterr().out
    assert markdown.startswith("### compilegate passes")
    assert "| where | what | baseline → now | change | limit | noise | verdict |" in markdown


def test_threshold_flag_overrides_every_step(tmp_path, baseline):
    res = write(tmp_path / "result.json", result(step(variants=[variant(speedup=1.15)])))
    assert invoke("compare", "--baseline", baseline, "--result", res)[0] == 1
    relaxed = ("--threshold", "speedup_drop_pct=10")
    assert invoke("compare", "--baseline", baseline, "--result", res, *relaxed)[0] == 0


@pytest.mark.parametrize("item", ["speedup_drop_pct", "speedup_drop_pct=abc", "typo_pct=3"])
def test_bad_threshold_flag_is_a_usage_error(item):
    with pytest.raises(UsageError) as err:
        parse_threshold_args([item])
    assert err.value.exit_code == 2


def test_corrupt_baseline_exits_2_with_one_line_naming_the_file(tmp_path):
    bad = tmp_path / "baseline.json"
    bad.write_text('{"steps": [', encoding="utf-8")
    res = write(tmp_path / "result.json", result())
    code, error = invoke("compare", "--baseline", bad, "--result", res)
    assert code == 2
    assert error.startswith(f"{bad}: baseline is not valid JSON") and "\n" not in error


def test_schema_invalid_result_exits_2(tmp_path, baseline):
    res = write(tmp_path / "result.json", {"schema_version": 1})
    code, error = invoke("compare", "--baseline", baseline, "--result", res)
    assert code == 2 and "result.json: not a valid compilegate result document" in error


def test_missing_baseline_exits_2(tmp_path):
    res = write(tmp_path / "result.json", result())
    code, error = invoke("compare", "--baseline", tmp_path / "none.json", "--result", res)
    assert code == 2 and error.endswith("none.json: baseline file not found")


def test_baseline_update_writes_and_reports(tmp_path, capsys):
    res = write(tmp_path / "result.json", result(step("a")))
    target = tmp_path / "baseline.json"
    code, _ = invoke("baseline", "update", "--result", res, "--baseline", target)
    assert code == 0
    assert json.loads(target.read_text())["steps"][0]["name"] == "a"
    assert "baseline updated: 1 added (a)" in capsys.readouterr().out


def test_baseline_without_action_is_an_argparse_usage_error():
    with pytest.raises(SystemExit) as exit_info:
        parser().parse_args(["baseline"])
    assert exit_info.value.code == 2


def test_compare_and_report_for_run_with_baseline(tmp_path, baseline):
    stream = io.StringIO()
    doc = result(step(variants=[variant(speedup=1.0)]))
    out = tmp_path / "verdict.json"
    assert compare_and_report(baseline, doc, out, stream) == 1
    assert stream.getvalue().startswith("❌ compilegate fails on step speed only")
    assert json.loads(out.read_text())["counts"]["regression"] == 1


def test_compare_and_report_checks_each_document_once(tmp_path, baseline, monkeypatch):
    """The door (results/model.check) once per document: parsed in compare_and_report and
    handed on typed, not checked there and parsed again below it."""
    import compilegate.gate.documents as documents
    import compilegate.results.model as model

    checked = []
    real_check = model.check

    def counting_check(raw, source, role="result"):
        checked.append(source)
        return real_check(raw, source, role)

    monkeypatch.setattr(model, "check", counting_check)
    monkeypatch.setattr(documents, "check", counting_check)
    compare_and_report(baseline, result(), None, io.StringIO(), result_path="r.json")
    assert sorted(checked) == sorted([str(baseline), "r.json"])


def test_compare_and_report_other_gpu_is_incomparable_and_fails(tmp_path):
    other = write(tmp_path / "baseline.json", result(env=environment(gpu_name="NVIDIA A100")))
    stream = io.StringIO()
    assert compare_and_report(other, result(), None, stream, result_path="r.json") == 4
    text = stream.getvalue()
    assert text.startswith("❌ compilegate fails: not comparable with the baseline in train")
    first_screen = " ".join(text.split("\n== ")[0].split())
    assert "❌ not comparable" in first_screen and "A100" in first_screen
    assert f"compilegate baseline update --result r.json --baseline {other}" in stream.getvalue()


def test_compare_and_report_missing_baseline_raises(tmp_path):
    with pytest.raises(BaselineError):
        compare_and_report(tmp_path / "none.json", result(), None, io.StringIO())


def test_registered_in_the_compilegate_cli(tmp_path, baseline, capsys):
    cli = pytest.importorskip("compilegate.cli")
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    code = cli.main(["compare", "--baseline", str(bad), "--result", str(baseline)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "bad.json: not a valid compilegate baseline document" in err
