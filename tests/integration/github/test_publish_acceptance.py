"""Accepting with a label as a user triggers it: `compilegate publish` (and, for a fork,
`compilegate record-acceptance`) as real subprocesses in the environment GitHub gives a step,
with event files shaped like GitHub's and real HTTP to the local GitHub, which checks every
exchange against GitHub's contract (issue 38, findings 3 and 6)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
from fake_github import EVENT_FILE, REPO, FakeGitHub
from test_acceptance import base_doc, regressed_doc
from test_publish_command import publish_cli, write

from compilegate.github.acceptance_record import RECORD_MARKER, AcceptanceRecord
from repo_helpers import RUNNER

LABEL = "compilegate: accept"
PR = 31
AUTHOR, MAINTAINER = "contributor", "maintainer"
LABELLED, PUSHED = "1a" * 20, "2b" * 20
FORK = "contributor/trainer"


def documents(tmp_path: Path) -> tuple[Path, Path]:
    """A baseline naming the default accept label, and a result that compiles into twice the
    graphs (a compile_work regression), at tmp_path/baseline.json and tmp_path/results (where
    the helpers below read them)."""
    baseline = write(tmp_path / "baseline.json", base_doc())
    results = tmp_path / "results"
    write(results / "torch-2.13.0" / "result.json", regressed_doc())
    return baseline, results


def labeled_event(tmp_path: Path, label: str, head_sha: str, *, fork: bool = False) -> Path:
    """GitHub's pull_request `labeled` payload: the stored synchronize event, relabelled."""
    payload = copy.deepcopy(json.loads(EVENT_FILE.read_text()))
    payload.update(action="labeled", number=PR)
    payload["label"] = {"id": 7, "name": label, "color": "0e8a16", "default": False}
    payload["sender"] = dict(payload["sender"], login=MAINTAINER, type="User")
    pull = payload["pull_request"]
    pull.update(number=PR)
    pull["user"] = dict(pull["user"], login=AUTHOR)
    pull["head"]["sha"] = head_sha
    if fork:
        pull["head"]["repo"]["full_name"] = FORK
    return write(tmp_path / f"labeled-{head_sha[:4]}.json", payload)


def workflow_run_event(tmp_path: Path, head_sha: str, head_ref: str) -> Path:
    """fork-publish.yml's `workflow_run` payload after a maintainer started the fork's
    measuring run (a reopening, or a labelling: the payload does not say which)."""
    maintainer = {"login": MAINTAINER, "type": "User", "id": 2}
    run = {
        "id": 77, "name": "compilegate-fork-measure", "event": "pull_request",
        "status": "completed", "conclusion": "success", "head_sha": head_sha,
        "head_branch": head_ref, "path": ".github/workflows/fork-measure.yml",
        "head_repository": {"full_name": FORK}, "repository": {"full_name": REPO},
        "actor": maintainer, "triggering_actor": maintainer,
    }  # fmt: skip
    payload = {"action": "completed", "workflow_run": run}
    return write(tmp_path / f"run-{head_sha[:4]}.json", payload)


def publish_labelled(tmp_path: Path, fake: FakeGitHub, event: Path):
    """pr-gate.yml's publish in the job a same-repository `labeled` event started."""
    baseline, results = tmp_path / "baseline.json", tmp_path / "results"
    return publish_cli(
        tmp_path, fake, "--results-dir", str(results), "--baseline", str(baseline),
        environ={"GITHUB_EVENT_PATH": str(event)},
    )  # fmt: skip


def record_labelling(tmp_path: Path, fake: FakeGitHub, event: Path):
    """fork-publish.yml's pull_request_target job on `labeled`: `record-acceptance`."""
    return publish_cli(
        tmp_path, fake, "--baseline", str(tmp_path / "baseline.json"),
        command="record-acceptance",
        environ={"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": str(event)},
    )  # fmt: skip


def publish_fork_run(tmp_path: Path, fake: FakeGitHub, head_sha: str):
    """fork-publish.yml's workflow_run job after the fork's measuring run of `head_sha`."""
    event = workflow_run_event(tmp_path, head_sha, "speedup")
    return publish_cli(
        tmp_path, fake, "--results-dir", str(tmp_path / "results"),
        "--baseline", str(tmp_path / "baseline.json"), "--pr-from-workflow-run",
        environ={"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event)},
    )  # fmt: skip


def outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "output").read_text().splitlines()
    return {line.split("<<")[0]: lines[i + 1] for i, line in enumerate(lines) if "<<" in line}


def test_a_label_naming_rows_accepts_those_rows_through_publish(
    tmp_path: Path, fake_github: FakeGitHub
):
    """Issue 38, finding 6: `compilegate: accept: compile_work` on the pull request logged
    "regressions accepted" while the verdict stayed `regression`, exit 1."""
    documents(tmp_path)
    named = f"{LABEL}: compile_work"
    fake_github.open_pull_request(PR, LABELLED, REPO, labels=(named,), author=AUTHOR)
    done = publish_labelled(tmp_path, fake_github, labeled_event(tmp_path, named, LABELLED))
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs(tmp_path)["verdict"] == "accepted"
    (comment,) = fake_github.comments_on(PR)
    # inert in markdown: a word joiner after `@` (no mention), `_` escaped
    label = named.replace("_", "\\_")
    said = f'accepted by @\u2060{MAINTAINER} (label "{label}") at {LABELLED[:12]}'
    assert said in comment["body"], comment["body"][:600]
    # the same label naming another row accepts nothing
    other = f"{LABEL}: numerics"
    fake_github.open_pull_request(PR, LABELLED, REPO, labels=(other,), author=AUTHOR)
    done = publish_labelled(tmp_path, fake_github, labeled_event(tmp_path, other, LABELLED))
    assert done.returncode == 1, done.stdout + done.stderr
    assert outputs(tmp_path)["verdict"] == "regression"


def test_a_forks_acceptance_holds_for_the_labelled_commit_only(
    tmp_path: Path, fake_github: FakeGitHub
):
    """Issue 38, finding 3: a maintainer labels the fork's head X; the fork pushes Y; a
    later maintainer-started run at Y (here: a reopening) must not accept Y."""
    documents(tmp_path)
    fake_github.open_pull_request(
        PR, LABELLED, FORK, labels=(LABEL,), author=AUTHOR, head_ref="speedup"
    )
    # fork-publish.yml's pull_request_target job, on `labeled`: the labelling recorded
    event = labeled_event(tmp_path, LABEL, LABELLED, fork=True)
    done = record_labelling(tmp_path, fake_github, event)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"recorded: regressions accepted by @{MAINTAINER}" in done.stdout
    # the fork's run of X, published by fork-publish.yml's workflow_run job: accepted
    done = publish_fork_run(tmp_path, fake_github, LABELLED)
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs(tmp_path)["verdict"] == "accepted"
    # the fork pushes Y; the label stays on; a maintainer reopens, and Y is measured
    fake_github.push(PR, PUSHED)
    done = publish_fork_run(tmp_path, fake_github, PUSHED)
    assert done.returncode == 1, done.stdout + done.stderr
    assert outputs(tmp_path)["verdict"] == "regression"
    assert f"applied at {LABELLED[:12]}, not at the measured commit {PUSHED[:12]}" in done.stdout
    # the label applied again at Y: recorded there, and Y is accepted
    done = record_labelling(
        tmp_path, fake_github, labeled_event(tmp_path, LABEL, PUSHED, fork=True)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    done = publish_fork_run(tmp_path, fake_github, PUSHED)
    assert done.returncode == 0, done.stdout + done.stderr
    records = [c for c in fake_github.comments_on(PR) if "acceptance record" in c["body"]]
    assert len(records) == 1 and PUSHED in records[0]["body"]  # one record, updated in place


def test_the_forks_author_cannot_record_an_acceptance(tmp_path: Path, fake_github: FakeGitHub):
    documents(tmp_path)
    fake_github.open_pull_request(PR, LABELLED, FORK, labels=(LABEL,), author=AUTHOR)
    payload = json.loads(labeled_event(tmp_path, LABEL, LABELLED, fork=True).read_text())
    payload["sender"]["login"] = AUTHOR
    done = record_labelling(tmp_path, fake_github, write(tmp_path / "by-author.json", payload))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing recorded" in done.stdout and "author" in done.stdout
    assert fake_github.comments_on(PR) == []


def test_a_dry_run_with_a_saved_event_rehearses_the_label(tmp_path: Path) -> None:
    """Issue 40, finding 7: `publish --dry-run` asked for GITHUB_* variables one at a time
    and never said what the label would change. With a saved `labeled` event it needs none,
    asks GitHub nothing, and says what accepting would do."""
    import os
    import subprocess

    baseline, results = documents(tmp_path)
    event = labeled_event(tmp_path, LABEL, LABELLED)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(RUNNER)}
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", "publish", "--dry-run", "--event", str(event),
         "--results-dir", str(results), "--baseline", str(baseline)],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the gate's verdict, unaccepted
    assert (
        f'regressions would be accepted by @{MAINTAINER} (label "{LABEL}") at {LABELLED[:12]}: '
        "the verdict regression → accepted (exit 1 → 0)"
    ) in done.stdout
    assert "nothing is sent" in done.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "compilegate", "publish", "--event", str(event),
         "--results-dir", str(results), "--baseline", str(baseline)],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2 and "use it with --dry-run" in refused.stderr


def test_a_record_by_another_app_is_ignored_and_never_edited(
    tmp_path: Path, fake_github: FakeGitHub
):
    """Issue 51, finding 7: a comment by `some-other-app[bot]` carrying the record marker and
    a forged record made the fork's publish print "regressions accepted by @maintainer" and
    exit 0 (any Bot's record counted), and record-acceptance would have edited that comment."""
    documents(tmp_path)
    fake_github.open_pull_request(
        PR, LABELLED, FORK, labels=(LABEL,), author=AUTHOR, head_ref="speedup"
    )
    forged = AcceptanceRecord(commit=LABELLED, label=LABEL, login=MAINTAINER).body()
    other = fake_github.add_comment(PR, forged, login="some-other-app[bot]", kind="Bot")
    done = publish_fork_run(tmp_path, fake_github, LABELLED)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "accepted by" not in done.stdout
    assert f"no labelling of pull request #{PR} was recorded" in done.stdout
    assert outputs(tmp_path)["verdict"] == "regression"
    # the maintainer's real labelling: recorded in a comment of compilegate's own
    event = labeled_event(tmp_path, LABEL, LABELLED, fork=True)
    done = record_labelling(tmp_path, fake_github, event)
    assert done.returncode == 0, done.stdout + done.stderr
    patched = [s.path for s in fake_github.seen if s.method == "PATCH"]
    assert not any(path.endswith(f"/issues/comments/{other}") for path in patched), patched
    comments = {c["id"]: c for c in fake_github.comments_on(PR)}
    assert comments[other]["body"] == forged  # untouched
    records = [c for c in comments.values() if c["body"].startswith(RECORD_MARKER)]
    assert [c["user"]["login"] for c in records] == ["some-other-app[bot]", "github-actions[bot]"]
    done = publish_fork_run(tmp_path, fake_github, LABELLED)
    assert done.returncode == 0, done.stdout + done.stderr
    assert fake_github.violations == []


def dry_run_publish(tmp_path: Path, event: Path, *extra: str):
    """`publish --dry-run --event FILE` as a user rehearses it: no GITHUB_* variables, no
    token, nothing sent."""
    import os
    import subprocess

    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(RUNNER)}
    return subprocess.run(
        [sys.executable, "-m", "compilegate", "publish", "--dry-run", "--event", str(event),
         "--results-dir", str(tmp_path / "results"), "--baseline", str(tmp_path / "baseline.json"),
         *extra],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip


def real_decision(stdout: str) -> str:
    """What the real publish decided for LABEL: `accepted by …` or the reason it refused."""
    for line in stdout.splitlines():
        if line.startswith(f'compilegate: "{LABEL}" accepts nothing: '):
            return "refused: " + line.split("accepts nothing: ", 1)[1]
        if line.startswith("compilegate: regressions accepted by "):
            return "accepted by " + line.split("accepted by ", 1)[1]
    raise AssertionError(f"the real publish decided nothing:\n{stdout}")


def rehearsed_decision(stdout: str) -> str:
    """What the dry run says the real publish would decide, in the real publish's words."""
    for line in stdout.splitlines():
        if line.startswith(f'compilegate publish --dry-run: "{LABEL}" would accept nothing: '):
            why = line.split("would accept nothing: ", 1)[1]
            return "refused: " + why.rsplit("; the verdict stays ", 1)[0]
        if line.startswith("compilegate publish --dry-run: regressions would be accepted by "):
            return "accepted by " + line.split("accepted by ", 1)[1].split(": the verdict ")[0]
    raise AssertionError(f"the dry run decided nothing:\n{stdout}")


def event_variant(tmp_path: Path, case: str) -> Path:
    """The events of issue 54, finding 1: a correct `labeled` event, a `bug` label, a
    `synchronize` event, the label applied by the pull request's own author, and by a bot."""
    if case == "synchronize":
        payload = copy.deepcopy(json.loads(EVENT_FILE.read_text()))
        payload.update(number=PR)
        payload["pull_request"].update(number=PR)
        payload["pull_request"]["user"] = dict(payload["pull_request"]["user"], login=AUTHOR)
        payload["pull_request"]["head"]["sha"] = LABELLED
        return write(tmp_path / "synchronize.json", payload)
    label = "bug" if case == "bug label" else LABEL
    payload = json.loads(labeled_event(tmp_path, label, LABELLED).read_text())
    if case == "by the author":
        payload["sender"]["login"] = AUTHOR
    if case == "by a bot":
        payload["sender"].update(login="renovate[bot]", type="Bot")
    return write(tmp_path / f"{case.replace(' ', '-')}.json", payload)


@pytest.mark.parametrize(
    "case", ["labeled", "bug label", "synchronize", "by the author", "by a bot"]
)
def test_the_dry_run_decides_what_the_real_publish_decides(
    tmp_path: Path, fake_github: FakeGitHub, case: str
):
    """Issue 54, finding 1: `publish --dry-run --event FILE` said a `bug` label, a
    `synchronize` event and the author's own label "would make the verdict regression →
    accepted": its branch returned before the acceptance check ran. Now the dry run runs
    that check on the event, and decides what the real publish decides, for the same
    reason, with GitHub's answer assumed from the event and said."""
    documents(tmp_path)
    event = event_variant(tmp_path, case)
    label = json.loads(event.read_text()).get("label", {}).get("name")
    fake_github.open_pull_request(
        PR, LABELLED, REPO, labels=(label,) if label else (), author=AUTHOR
    )
    real = publish_labelled(tmp_path, fake_github, event)
    rehearsed = dry_run_publish(tmp_path, event)
    assert rehearsed.returncode == 1, rehearsed.stdout + rehearsed.stderr  # nothing accepted
    assert real_decision(real.stdout) == rehearsed_decision(rehearsed.stdout)
    accepted = case == "labeled"
    assert real.returncode == (0 if accepted else 1), real.stdout + real.stderr
    assert ("the verdict regression → accepted (exit 1 → 0)" in rehearsed.stdout) is accepted, (
        rehearsed.stdout
    )
    if case in ("labeled", "by the author"):  # GitHub was asked: the answer assumed is said
        assert f"GET /repos/{REPO}/pulls/{PR}: assumed open, head {LABELLED[:12]}" in (
            rehearsed.stdout
        )


def test_a_saved_answer_of_github_shows_a_push_after_the_label(
    tmp_path: Path, fake_github: FakeGitHub
):
    """The `labeled` event alone cannot show a later push: with GitHub's saved answer of
    pulls/get (`--saved-pull-request`), the dry run refuses the commit the real publish
    refuses, for the same reason; a saved answer missing a key is named by its path."""
    documents(tmp_path)
    event = labeled_event(tmp_path, LABEL, LABELLED)
    fake_github.open_pull_request(PR, LABELLED, REPO, labels=(LABEL,), author=AUTHOR)
    fake_github.push(PR, PUSHED)
    saved = write(tmp_path / "pull.json", fake_github.pulls[PR])
    real = publish_labelled(tmp_path, fake_github, event)
    rehearsed = dry_run_publish(tmp_path, event, "--saved-pull-request", str(saved))
    decision = real_decision(real.stdout)
    assert decision == rehearsed_decision(rehearsed.stdout)
    assert f"moved to {PUSHED[:12]} after the labelled commit {LABELLED[:12]}" in decision
    assert f"pulls/{PR}: answered from the saved {saved}" in rehearsed.stdout
    broken = json.loads(saved.read_text())
    del broken["head"]["sha"]
    rehearsed = dry_run_publish(
        tmp_path, event, "--saved-pull-request", str(write(tmp_path / "broken.json", broken))
    )
    assert rehearsed.returncode == 2, rehearsed.stdout + rehearsed.stderr
    (line,) = rehearsed.stderr.strip().splitlines()
    assert "broken.json: not a pulls/get answer: `head.sha` is missing" in line


@pytest.mark.parametrize(
    ("key_path", "drop"),
    [
        ("repository.url", lambda payload: payload["repository"].pop("url")),
        ("pull_request.head.sha", lambda payload: payload["pull_request"]["head"].pop("sha")),
        ("pull_request.number", lambda payload: payload["pull_request"].pop("number")),
    ],
)
def test_a_hand_written_event_missing_a_key_is_named_by_its_path(
    tmp_path: Path, key_path: str, drop
):
    """Issue 54, finding 8: an event written by hand and missing `repository.url` gave "not
    a usable event payload (KeyError('url'))", naming no object or key path."""
    documents(tmp_path)
    payload = json.loads(labeled_event(tmp_path, LABEL, LABELLED).read_text())
    drop(payload)
    event = write(tmp_path / "by-hand.json", payload)
    done = dry_run_publish(tmp_path, event)
    assert done.returncode == 2, done.stdout + done.stderr  # a usage error (docs/gate.md)
    (line,) = done.stderr.strip().splitlines()
    assert str(event) in line and f"`{key_path}` is missing" in line, line
    assert "KeyError" not in line and "Traceback" not in done.stderr
