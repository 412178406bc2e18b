"""Reading the Actions environment, and writing summary, outputs and annotations back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compilegate.errors import UsageError
from compilegate.github import (
    ActionsContext,
    Annotation,
    append_step_summary,
    limit_annotations,
    write_outputs,
)

BASE = "octo-org/trainer"


def pr_event(
    tmp_path: Path, *, head_repo: str | None = BASE, number: object = 42, name: str = "event.json"
) -> Path:
    head = {
        "sha": "a" * 40,
        "ref": "feature",
        "repo": {"full_name": head_repo} if head_repo else None,
    }
    payload = {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": head,
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": BASE}},
        },
    }
    path = tmp_path / name
    path.write_text(json.dumps(payload))
    return path


def environ(tmp_path: Path, **overrides: str) -> dict[str, str]:
    values = {
        "GITHUB_REPOSITORY": BASE,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(pr_event(tmp_path, name="default-event.json")),
        "GITHUB_SHA": "c" * 40,
        "GITHUB_API_URL": "http://ghes.test/api/v3/",
        "GITHUB_SERVER_URL": "http://ghes.test",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_RUN_ID": "123",
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": "ghs_secret",
    }
    values.update(overrides)
    return {k: v for k, v in values.items() if v is not None}


def test_a_pull_request_run_is_read_whole(tmp_path: Path) -> None:
    context = ActionsContext.from_environ(environ(tmp_path))

    assert context.repository == BASE
    assert context.api_url == "http://ghes.test/api/v3"
    assert context.pull_request is not None and context.pull_request.number == 42
    assert context.head_sha == "a" * 40  # the PR's head, not the merge commit in GITHUB_SHA
    assert not context.is_fork
    assert context.in_github_actions
    assert context.token == "ghs_secret"
    assert "ghs_secret" not in repr(context)
    assert context.run_url == f"http://ghes.test/{BASE}/actions/runs/123"


def test_a_pull_request_from_a_fork_is_a_fork(tmp_path: Path) -> None:
    event = pr_event(tmp_path, head_repo="someone/trainer")
    context = ActionsContext.from_environ(environ(tmp_path, GITHUB_EVENT_PATH=str(event)))
    assert context.is_fork


def test_a_pull_request_from_a_deleted_fork_is_a_fork(tmp_path: Path) -> None:
    event = pr_event(tmp_path, head_repo=None)
    context = ActionsContext.from_environ(environ(tmp_path, GITHUB_EVENT_PATH=str(event)))
    assert context.is_fork


def test_a_push_names_no_pull_request(tmp_path: Path) -> None:
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main", "after": "c" * 40}))
    context = ActionsContext.from_environ(
        environ(tmp_path, GITHUB_EVENT_NAME="push", GITHUB_EVENT_PATH=str(push))
    )
    assert context.pull_request is None
    assert context.head_sha == "c" * 40


def test_workflow_run_takes_the_pr_it_names_and_a_forks_can_be_given(tmp_path: Path) -> None:
    run = {
        "workflow_run": {
            "head_sha": "d" * 40,
            "pull_requests": [{"number": 7, "head": {"sha": "d" * 40}}],
            "head_repository": {"full_name": BASE},
            "repository": {"full_name": BASE},
        }
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    env = environ(tmp_path, GITHUB_EVENT_NAME="workflow_run", GITHUB_EVENT_PATH=str(path))
    context = ActionsContext.from_environ(env)
    assert context.pull_request is not None
    assert (context.pull_request.number, context.head_sha) == (7, "d" * 40)

    run["workflow_run"]["pull_requests"] = []  # what GitHub sends for a fork's PR
    path.write_text(json.dumps(run))
    forked = ActionsContext.from_environ(env)
    assert forked.pull_request is None
    assert forked.for_pull_request(9, head_sha="e" * 40).pull_request.number == 9


def test_missing_repository_is_a_one_line_usage_error_naming_it(tmp_path: Path) -> None:
    env = environ(tmp_path)
    del env["GITHUB_REPOSITORY"]

    with pytest.raises(UsageError) as raised:
        ActionsContext.from_environ(env)
    assert "GITHUB_REPOSITORY" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert raised.value.exit_code == 2


def test_every_missing_variable_is_named_at_once(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="GITHUB_REPOSITORY, GITHUB_EVENT_NAME, GITHUB_SHA"):
        ActionsContext.from_environ({"GITHUB_REPOSITORY": ""})


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"GITHUB_REPOSITORY": "just-a-name"}, "GITHUB_REPOSITORY must be owner/name"),
        ({"GITHUB_API_URL": "api.test"}, "GITHUB_API_URL must be an http"),
        ({"GITHUB_SERVER_URL": "file:///etc"}, "GITHUB_SERVER_URL must be an http"),
        ({"GITHUB_EVENT_PATH": "/nonexistent/event.json"}, "GITHUB_EVENT_PATH /nonexistent"),
        ({"GITHUB_EVENT_PATH": ""}, "GITHUB_EVENT_PATH not set"),
    ],
)
def test_invalid_values_name_their_variable(tmp_path: Path, overrides: dict, named: str) -> None:
    with pytest.raises(UsageError, match=re.escape(named)):
        ActionsContext.from_environ(environ(tmp_path, **overrides))


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"pull_request": {"number": 1}}'])
def test_an_unusable_event_payload_names_the_file(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(UsageError, match=r"GITHUB_EVENT_PATH .*bad\.json"):
        ActionsContext.from_environ(environ(tmp_path, GITHUB_EVENT_PATH=str(bad)))


def test_a_pull_request_number_that_is_not_a_positive_integer_is_refused(tmp_path: Path) -> None:
    event = pr_event(tmp_path, number="42")
    with pytest.raises(UsageError, match="not a usable pull_request payload"):
        ActionsContext.from_environ(environ(tmp_path, GITHUB_EVENT_PATH=str(event)))


# --- annotation limits -----------------------------------------------------------------------


def test_limits_keep_errors_first_and_count_what_was_left_out() -> None:
    warnings = [Annotation("warning", f"break {i}", "m.py", i + 1) for i in range(25)]
    errors = [Annotation("error", f"regression {i}") for i in range(3)]
    notices = [Annotation("notice", f"note {i}") for i in range(10)]

    limited = limit_annotations([*warnings, *notices, *errors])

    levels = [a.level for a in limited.shown]
    assert levels == ["error"] * 3 + ["warning"] * 10 + ["notice"] * 10
    assert [a.message for a in limited.shown[3:12]] == [f"break {i}" for i in range(9)]
    assert limited.shown[12].title == "compilegate: 16 more warnings"
    assert dict(limited.dropped) == {"warning": 16}
    assert limited.dropped_total == 16


def test_at_the_limit_nothing_is_dropped() -> None:
    limited = limit_annotations([Annotation("error", str(i)) for i in range(10)])
    assert len(limited.shown) == 10 and limited.dropped_total == 0


# --- outputs and summary ----------------------------------------------------------------------


def parse_outputs(text: str) -> dict[str, str]:
    """Read a GITHUB_OUTPUT file the way the runner does (heredoc form)."""
    values: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        name, delimiter = line.split("<<", 1)
        body = []
        for inner in lines:
            if inner == delimiter:
                break
            body.append(inner)
        else:
            raise AssertionError(f"unterminated output {name}")
        values[name] = "\n".join(body)
    return values


def test_outputs_use_the_heredoc_form_with_a_delimiter_not_in_the_value(tmp_path: Path) -> None:
    path = tmp_path / "output"
    tricky = "line one\nEOF\nverdict<<EOF\npass"
    drawn = iter(
        ["EOF", "ghadelimiter_2", "ghadelimiter_3"]
    )  # the first draw occurs in the value: drawn again

    write_outputs(path, {"verdict": "regression"})
    write_outputs(path, {"note": tricky, "comment-url": ""}, new_delimiter=lambda: next(drawn))

    text = path.read_text()
    assert "note<<ghadelimiter_2\n" in text
    assert re.match(r"verdict<<ghadelimiter_[0-9a-f-]{36}\nregression\n", text)
    assert parse_outputs(text) == {"verdict": "regression", "note": tricky, "comment-url": ""}


def test_an_output_name_with_odd_characters_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="output name"):
        write_outputs(tmp_path / "o", {"a<<b": "x"})


def test_the_summary_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("## earlier step\n")

    assert append_step_summary(path, "## compilegate") is False
    assert path.read_text() == "## earlier step\n## compilegate\n"


def test_the_summary_is_cut_to_fit_githubs_limit(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    report = "".join(f"| row {i} |\n" for i in range(100))

    assert append_step_summary(path, report, limit_bytes=500) is True
    text = path.read_text()
    assert len(text.encode()) <= 500
    assert text.startswith("| row 0 |\n")
    assert text.endswith("did not fit GitHub's 1 MiB summary.*\n")
