"""Accepting an intended change (gate/acceptance.py): the base side's label turns regression
rows, and only those, into `accepted` (exit 0), saying who accepted them."""

from __future__ import annotations

import pytest
from gate_docs import compile_cost, judge_documents, result, step, variant

from compilegate.config.loading import load_config_text
from compilegate.errors import EXIT_NOT_JUDGED, EXIT_OK, EXIT_REGRESSION, BaselineError
from compilegate.gate.acceptance import (
    Acceptance,
    accept,
    accept_label_of,
)
from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.comment import render_comment
from compilegate.report.headline import headline_of
from compilegate.report.row_words import row_message
from compilegate.results.model import ResultDocument, parse

LABEL = "compilegate: accept"
COMMIT = "0123456789abcdef" * 2 + "01234567"
MAINTAINER = Acceptance(label=LABEL, login="maintainer", commit=COMMIT)
COUNTS = {"graphs": 1, "fx_nodes": 33, "guards": 199, "generated_kernels": 61,
          "compile_records": 2, "backward_compile_records": 1}  # fmt: skip


def cost(**counts: int) -> dict:
    return compile_cost(10.0, cpu_s=20.0, counts={**COUNTS, **counts})


def base_doc(accept_label: object = LABEL, *, record: bool = True) -> dict:
    doc = result(step(variants=[variant(compile_cost=cost())]))
    if record:
        doc["config"] = {
            "path": "compilegate.yml",
            "sha256": "0" * 64,
            "accept_label": accept_label,
        }
    else:
        doc.pop("config", None)
    return doc


def parsed_base(accept_label: object = LABEL, *, record: bool = True) -> ResultDocument:
    """base_doc through the door (results/model.parse), as the gate reads a baseline."""
    return parse(base_doc(accept_label, record=record), "baseline.json", "baseline")


def regressed_doc() -> dict:
    return result(step(variants=[variant(compile_cost=cost(graphs=2))]))


def test_a_verified_label_accepts_the_regression_rows_and_says_who():
    report = judge_documents(base_doc(), regressed_doc())
    assert report.exit_code == EXIT_REGRESSION
    accepted = accept(report, LABEL, MAINTAINER)
    assert accepted.overall == "accepted" and accepted.exit_code == EXIT_OK
    rows = accepted.rows("accepted")
    assert [r.metric for r in rows] == ["compile_work"]
    assert 'accepted by @maintainer (label "compilegate: accept")' in row_message(rows[0])
    assert accepted.to_dict()["accepted_by"] == {
        "login": "maintainer",
        "label": LABEL,
        "commit": COMMIT,
    }
    assert not accepted.rows("regression")


def test_no_acceptance_another_label_or_acceptance_off_change_nothing():
    report = judge_documents(base_doc(), regressed_doc())
    assert accept(report, LABEL, None) is report
    assert accept(report, None, MAINTAINER) is report  # the base side turned it off
    other = Acceptance(label="perf: ok", login="maintainer", commit=COMMIT)
    assert accept(report, LABEL, other).exit_code == EXIT_REGRESSION


def test_an_incomparable_or_failed_row_is_never_accepted():
    base = base_doc()
    cur = regressed_doc()
    cur["steps"][0]["entry"] = "other.py:make_step"  # incomparable: another entry point
    report = accept(judge_documents(base, cur), LABEL, MAINTAINER)
    assert report.rows("incomparable") and not report.rows("accepted")
    assert report.exit_code == EXIT_NOT_JUDGED
    failed = regressed_doc()
    failed["steps"][0]["variants"][0].update(status="error", error="boom")
    report = accept(judge_documents(base_doc(), failed), LABEL, MAINTAINER)
    assert report.overall == "error" and not report.rows("accepted")


def test_a_regression_beside_an_error_still_fails_the_job():
    base = result(
        step(variants=[variant(compile_cost=cost()), variant(id="max", compile_cost=cost())])
    )
    base["config"] = base_doc()["config"]
    cur = result(
        step(
            variants=[variant(compile_cost=cost(graphs=2)), variant(id="max", compile_cost=cost())]
        )
    )
    cur["steps"][0]["variants"][1].update(status="error", error="boom")
    report = accept(judge_documents(base, cur), LABEL, MAINTAINER)
    assert report.rows("accepted") and report.overall == "error" and report.exit_code != EXIT_OK


def test_the_label_is_the_base_sides_never_the_pull_requests(tmp_path):
    """The PR's result records its own accept_label; the run set reads the baseline's."""
    base_path, cur_path = tmp_path / "base.json", tmp_path / "result.json"
    import json

    cur = regressed_doc()
    cur["config"] = {"path": "compilegate.yml", "sha256": "1" * 64, "accept_label": "lgtm"}
    cur_path.write_text(json.dumps(cur))
    for base_label, wanted in ((LABEL, [LABEL]), (None, []), ("perf: ok", ["perf: ok"])):
        base_path.write_text(json.dumps(base_doc(base_label)))
        base = parse(json.loads(base_path.read_text()), str(base_path), "baseline")
        run_set = judge_run_set([ResultSource(cur_path, "result")], base)
        assert run_set.labels_to_accept() == wanted
    pr_own = Acceptance(label="lgtm", login="maintainer", commit=COMMIT)
    assert run_set.accepted([pr_own]).exit_code == EXIT_REGRESSION


def test_a_baseline_from_before_the_key_has_the_default_label():
    assert accept_label_of(parsed_base(record=False)) == LABEL
    before_the_key = base_doc()
    del before_the_key["config"]["accept_label"]
    old = parse(before_the_key, "old.json", "baseline")
    assert old.config is not None and old.config.accept_label == LABEL  # read at the door
    assert accept_label_of(old) == LABEL
    assert accept_label_of(parsed_base(LABEL)) == LABEL
    assert accept_label_of(parsed_base(None)) is None
    assert accept_label_of(parsed_base("  ")) is None  # a hand-edited baseline: off
    assert accept_label_of(None) is None
    with pytest.raises(BaselineError, match="accept_label"):
        parsed_base(42)  # not a label at all: refused at the door


def test_acceptance_turned_off_stays_off_through_both_doors():
    """null (off) is written back as null: left out, it would read as the default label."""
    off = parsed_base(None)
    written = off.to_json()
    assert written["config"]["accept_label"] is None
    assert accept_label_of(parse(written, "again.json", "baseline")) is None


def test_the_config_key_defaults_and_turns_off(tmp_path):
    body = "steps:\n  - name: s\n    entry: s.py:make_step\n"
    assert (
        load_config_text("version: 1\n" + body, source="c.yml", repo_root=tmp_path).accept_label
        == LABEL
    )
    off = load_config_text(
        "version: 1\naccept_label: null\n" + body, source="c.yml", repo_root=tmp_path
    )
    assert off.accept_label is None


def test_the_comment_and_headline_say_who_accepted_what(tmp_path):
    import json

    cur_path = tmp_path / "result.json"
    cur_path.write_text(json.dumps(regressed_doc()))
    run_set = judge_run_set([ResultSource(cur_path, "result")], parsed_base())
    run_set = run_set.accepted([MAINTAINER])
    assert run_set.exit_code == EXIT_OK and run_set.overall == "accepted"
    _, headline = headline_of(run_set)
    assert headline.startswith("passes: compile time worse, accepted by @maintainer")
    assert "compile time" not in headline.split(";", 1)[1]  # said once
    markdown = render_comment(run_set)
    assert 'accepted by @\u2060maintainer (label "compilegate: accept")' in markdown  # no ping
    first_screen = markdown.split("<details")[0]
    assert "worse, accepted" in first_screen or "accepted by" in first_screen


def test_a_failing_report_says_how_to_accept_it_with_the_base_sides_label(tmp_path):
    import json

    from compilegate.report.advice import advice_for

    cur_path = tmp_path / "result.json"
    cur_path.write_text(json.dumps(regressed_doc()))
    said = [s for s, _ in advice_for(judge_run_set([ResultSource(cur_path, "r")], parsed_base()))]
    assert any('with the label "compilegate: accept"' in s for s in said), said
    off = judge_run_set([ResultSource(cur_path, "r")], parsed_base(None))
    assert not any("label" in s for s, _ in advice_for(off))


def test_a_label_naming_metrics_accepts_those_rows_only():
    report = judge_documents(base_doc(), regressed_doc())
    named = Acceptance(label=f"{LABEL}: compile work", login="maintainer", commit=COMMIT)
    accepted = accept(report, LABEL, named)
    assert [r.metric for r in accepted.rows("accepted")] == ["compile_work"]
    assert accepted.exit_code == EXIT_OK
    other = Acceptance(
        label=f"{LABEL}: graph_break_sites, numerics", login="maintainer", commit=COMMIT
    )
    assert accept(report, LABEL, other).exit_code == EXIT_REGRESSION
    lookalike = Acceptance(label=f"{LABEL}able", login="maintainer", commit=COMMIT)
    assert accept(report, LABEL, lookalike).exit_code == EXIT_REGRESSION
