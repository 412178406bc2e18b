"""Who may accept a run's regressions (github/acceptance.py), on event payloads as GitHub
sends them: a maintainer's `labeled` event, re-read through pulls/get."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from compilegate.github.acceptance import check_acceptance
from compilegate.github.acceptance_record import RECORD_MARKER, AcceptanceRecord
from compilegate.github.errors import GitHubNotFound
from compilegate.github.models import IssueComment, PullRequest

LABEL = "compilegate: accept"
REPO = "octo-org/trainer"
HEAD = "a" * 40
AUTHOR, MAINTAINER = "contributor", "maintainer"


def labeled_event(**changes: Any) -> dict[str, Any]:
    """A pull_request `labeled` payload (the fields GitHub documents for it)."""
    payload = {
        "action": "labeled",
        "number": 42,
        "label": {"id": 1, "name": LABEL, "color": "0e8a16"},
        "sender": {"login": MAINTAINER, "type": "User", "id": 2},
        "pull_request": {
            "number": 42,
            "state": "open",
            "user": {"login": AUTHOR, "type": "User"},
            "head": {"sha": HEAD, "repo": {"full_name": REPO}},
            "base": {"repo": {"full_name": REPO}},
            "labels": [{"name": LABEL}],
        },
    }
    payload.update(changes)
    return payload


def workflow_run_event(actor: str = MAINTAINER, triggering: str = MAINTAINER, **run: Any):
    """fork-publish.yml's workflow_run payload for a fork's measuring run."""
    body = {
        "event": "pull_request",
        "conclusion": "success",
        "head_sha": HEAD,
        "head_branch": "feature",
        "head_repository": {"full_name": "contributor/trainer"},
        "actor": {"login": actor, "type": "User"},
        "triggering_actor": {"login": triggering, "type": "User"},
    }
    body.update(run)
    return {"action": "completed", "workflow_run": body}


class PullClient:
    """GitHub's view of pull request 42 now (only pulls/get is called)."""

    def __init__(
        self,
        *,
        labels=(LABEL,),
        head_sha=HEAD,
        state="open",
        author=AUTHOR,
        gone=False,
        comments=(),
    ):
        self.pull = PullRequest(
            number=42,
            state=state,
            html_url=f"https://github.com/{REPO}/pull/42",
            head_sha=head_sha,
            head_repo_full_name="contributor/trainer",
            base_repo_full_name=REPO,
            labels=tuple(labels),
            author_login=author,
        )
        self.gone = gone
        self.comments = list(comments)
        self.calls: list[tuple[str, int]] = []

    def get_pull_request(self, repo: str, pull_number: int) -> PullRequest:
        self.calls.append((repo, pull_number))
        if self.gone:
            raise GitHubNotFound("404 Not Found", status=404)
        return self.pull

    def iter_issue_comments(self, repo: str, issue_number: int):
        return iter(self.comments)


def record_comment(commit=HEAD, label=LABEL, login=MAINTAINER, *, author_type="Bot", id=7):
    """The comment fork-publish.yml's pull_request_target job leaves when a label is applied."""
    body = AcceptanceRecord(commit=commit, label=label, login=login).body()
    return IssueComment(
        id=id,
        body=body,
        html_url=f"https://github.com/{REPO}/pull/42#issuecomment-{id}",
        author_login="github-actions[bot]" if author_type == "Bot" else "contributor",
        author_type=author_type,
        created_at="2026-12-06T06:00:00Z",
    )


def check(event_name: str, payload: dict, client: Any = None, label: str = LABEL):
    client = PullClient() if client is None else client
    return check_acceptance(event_name, payload, label, client, REPO, 42)


def test_a_maintainers_label_on_the_measured_commit_accepts():
    client = PullClient()
    result = check("pull_request", labeled_event(), client)
    assert result.acceptance is not None
    assert (result.acceptance.login, result.acceptance.label) == (MAINTAINER, LABEL)
    assert client.calls == [(REPO, 42)]  # re-read, not taken from the payload


def test_a_push_or_another_action_accepts_nothing_even_with_the_label_on():
    result = check("pull_request", labeled_event(action="synchronize"))
    assert result.acceptance is None and "'synchronize'" in (result.why_not or "")


def test_another_label_accepts_nothing():
    payload = labeled_event(label={"name": "perf: looks fine"})
    assert check("pull_request", payload).acceptance is None


def test_a_bot_cannot_accept():
    payload = labeled_event(sender={"login": "renovate[bot]", "type": "Bot"})
    result = check("pull_request", payload)
    assert result.acceptance is None and "Bot" in (result.why_not or "")


def test_the_author_cannot_accept_their_own_pull_request():
    payload = labeled_event(sender={"login": AUTHOR, "type": "User"})
    result = check("pull_request", payload)
    assert result.acceptance is None and "author" in (result.why_not or "")


def test_the_author_as_github_says_counts_not_as_the_payload_says():
    """A payload naming someone else as author: pulls/get's author wins."""
    payload = labeled_event()
    payload["pull_request"]["user"]["login"] = "someone-else"
    result = check("pull_request", payload, PullClient(author=MAINTAINER))
    assert result.acceptance is None


def test_a_label_removed_since_or_a_newer_head_accepts_nothing():
    result = check("pull_request", labeled_event(), PullClient(labels=()))
    assert result.acceptance is None and "does not carry" in (result.why_not or "")
    result = check("pull_request", labeled_event(), PullClient(head_sha="b" * 40))
    assert result.acceptance is None and "apply the label again" in (result.why_not or "")
    result = check("pull_request", labeled_event(), PullClient(state="closed"))
    assert result.acceptance is None


def test_without_github_nothing_is_accepted():
    assert (
        check_acceptance("pull_request", labeled_event(), LABEL, None, REPO, 42).acceptance is None
    )
    result = check("pull_request", labeled_event(), PullClient(gone=True))
    assert result.acceptance is None and "could not read" in (result.why_not or "")


def test_a_fork_run_accepts_the_commit_the_labelling_recorded():
    client = PullClient(comments=[record_comment()])
    result = check("workflow_run", workflow_run_event(), client)
    assert result.acceptance is not None
    assert (result.acceptance.login, result.acceptance.commit) == (MAINTAINER, HEAD)
    # who started the run does not matter: the record says who labelled which commit
    rerun = workflow_run_event(actor=AUTHOR, triggering=AUTHOR)
    assert check("workflow_run", rerun, client).acceptance is not None


def test_a_fork_push_after_the_label_is_not_accepted_by_a_later_maintainers_run():
    """Issue 38, finding 3: a maintainer labels X; the fork pushes Y; the maintainer reopens
    the pull request (its run: a pull_request event by the maintainer, the label still on)."""
    pushed = "b" * 40
    client = PullClient(head_sha=pushed, comments=[record_comment(commit=HEAD)])
    reopened = workflow_run_event(head_sha=pushed)
    result = check("workflow_run", reopened, client)
    assert result.acceptance is None
    assert "applied at aaaaaaaaaaaa, not at the measured commit bbbbbbbbbbbb" in (
        result.why_not or ""
    )


def test_a_fork_run_without_a_record_from_a_bot_accepts_nothing():
    result = check("workflow_run", workflow_run_event(), PullClient())
    assert result.acceptance is None and "was recorded" in (result.why_not or "")
    pasted = PullClient(comments=[record_comment(author_type="User")])
    assert check("workflow_run", workflow_run_event(), pasted).acceptance is None
    # the label removed since the record: revoked
    removed = PullClient(labels=(), comments=[record_comment()])
    assert check("workflow_run", workflow_run_event(), removed).acceptance is None
    # a record naming the author (a bot recorded what the event said): refused
    own = PullClient(comments=[record_comment(login=AUTHOR)])
    assert check("workflow_run", workflow_run_event(), own).acceptance is None
    pushed = workflow_run_event(event="push")
    assert check("workflow_run", pushed, PullClient(comments=[record_comment()])).acceptance is None


def test_a_record_by_another_app_accepts_nothing():
    """Issue 51, finding 7: a comment by `some-other-app[bot]` carrying the marker and a
    forged record was honoured (any Bot's counted)."""
    forged = dataclasses.replace(record_comment(id=9), author_login="some-other-app[bot]")
    result = check("workflow_run", workflow_run_event(), PullClient(comments=[forged]))
    assert result.acceptance is None and "was recorded" in (result.why_not or "")
    # beside compilegate's own older record at another commit: that one is the newest ours
    ours = record_comment(commit="b" * 40, id=3)
    result = check("workflow_run", workflow_run_event(), PullClient(comments=[ours, forged]))
    assert result.acceptance is None and "applied at bbbbbbbbbbbb" in (result.why_not or "")
    # with an App's token, named: its record counts, and github-actions[bot]'s does not
    app = dataclasses.replace(record_comment(id=11), author_login="compilegate-app[bot]")
    client = PullClient(comments=[app])
    named = check_acceptance(
        "workflow_run", workflow_run_event(), LABEL, client, REPO, 42,
        record_author="compilegate-app[bot]",
    )  # fmt: skip
    assert named.acceptance is not None
    actions_only = PullClient(comments=[record_comment(id=12)])
    not_named = check_acceptance(
        "workflow_run", workflow_run_event(), LABEL, actions_only, REPO, 42,
        record_author="compilegate-app[bot]",
    )  # fmt: skip
    assert not_named.acceptance is None


def test_the_newest_record_counts_and_a_broken_one_is_skipped():
    older = record_comment(commit="b" * 40, id=3)
    newer = record_comment(commit=HEAD, id=9)
    broken = dataclasses.replace(newer, id=11, body=f"{RECORD_MARKER}\n<!-- not json -->")
    client = PullClient(comments=[newer, older, broken])
    assert check("workflow_run", workflow_run_event(), client).acceptance is not None


def test_a_record_round_trips_and_no_label_closes_its_html_comment():
    record = AcceptanceRecord(commit=HEAD, label="accept --> <b>x</b>", login=MAINTAINER)
    body = record.body()
    assert body.splitlines()[1].count("-->") == 1
    assert AcceptanceRecord.from_body(body) == record
    assert AcceptanceRecord.from_body(body.replace(HEAD, "HEAD")) is None


def test_other_events_and_broken_payloads_accept_nothing():
    assert check("push", {"ref": "refs/heads/main"}).acceptance is None
    broken = copy.deepcopy(labeled_event())
    del broken["sender"]
    result = check("pull_request", broken)
    assert result.acceptance is None and "not usable" in (result.why_not or "")


# -- compilegate publish: the acceptance reaches the verdict, the outputs and the exit code ----


def publish_in(tmp_path, monkeypatch, payload: dict, *, base_label: object = LABEL):
    """`compilegate publish` on a regressed result against a baseline, in a labeled event's
    job, with GitHub's pull request as PullClient says; returns (exit code, verdict output)."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_acceptance import base_doc, regressed_doc

    from compilegate.cli import main, publish_acceptance

    base, result = tmp_path / "baseline.json", tmp_path / "results" / "result.json"
    result.parent.mkdir(exist_ok=True)
    base.write_text(json.dumps(base_doc(base_label)))
    result.write_text(json.dumps(regressed_doc()))
    event, outputs = tmp_path / "event.json", tmp_path / "outputs.txt"
    event.write_text(json.dumps(payload))
    for name, value in {
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": "c" * 40,
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_TOKEN": "ghs_test",
        "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_SERVER_URL": "https://github.com",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(publish_acceptance, "make_client", lambda context: PullClient())
    code = main(
        ["publish", "--results-dir", str(result.parent), "--baseline", str(base), "--no-comment"]
    )
    lines = outputs.read_text().splitlines()
    verdict = lines[lines.index(next(x for x in lines if x.startswith("verdict<<"))) + 1]
    return code, verdict


def test_publish_accepts_a_maintainers_label_and_says_so(tmp_path, monkeypatch, capsys):
    code, verdict = publish_in(tmp_path, monkeypatch, labeled_event())
    assert (code, verdict) == (0, "accepted")
    assert 'regressions accepted by @maintainer (label "compilegate: accept") at aaaaaaaaaaaa' in (
        capsys.readouterr().out
    )


def test_publish_keeps_the_regression_without_a_valid_acceptance(tmp_path, monkeypatch, capsys):
    code, verdict = publish_in(tmp_path, monkeypatch, labeled_event(action="synchronize"))
    assert (code, verdict) == (1, "regression")
    assert "accepts nothing" in capsys.readouterr().out
    code, _ = publish_in(tmp_path, monkeypatch, labeled_event(), base_label=None)  # off
    assert code == 1


def test_a_dry_run_asks_github_nothing(tmp_path, monkeypatch, capsys):
    """A dry run runs the real check with GitHub's answer assumed from the event, and says
    so (issue 54, finding 1); it never builds a client."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_acceptance import parsed_base, regressed_doc

    from compilegate.cli import publish_acceptance
    from compilegate.gate.run_set import ResultSource, judge_run_set
    from compilegate.github.actions_env import ActionsContext

    result = tmp_path / "result.json"
    result.write_text(json.dumps(regressed_doc()))
    run_set = judge_run_set([ResultSource(result, "r")], parsed_base())
    event = tmp_path / "event.json"
    event.write_text(json.dumps(labeled_event()))
    context = ActionsContext(
        repository=REPO,
        event_name="pull_request",
        sha="c" * 40,
        api_url="https://api.github.com",
        server_url="https://github.com",
        event_path=event,
    ).for_pull_request(42)
    monkeypatch.setattr(publish_acceptance, "make_client", lambda context: 1 / 0)
    assert publish_acceptance.with_acceptance(context, run_set, dry_run=True) is run_set
    said = capsys.readouterr().out
    assert f"GET /repos/{REPO}/pulls/42: assumed open, head {HEAD[:12]}" in said
    assert "the verdict regression → accepted (exit 1 → 0)" in said
    event.write_text("{}")  # no action: what the real check says, not an acceptance
    publish_acceptance.with_acceptance(context, run_set, dry_run=True)
    said = capsys.readouterr().out
    assert "would accept nothing: a pull_request event of action None, not `labeled`" in said
    assert "→ accepted" not in said and "GET /repos" not in said


def test_a_label_naming_rows_is_the_accept_label_and_github_must_carry_it():
    named = f"{LABEL}: compile_work"
    payload = labeled_event(label={"name": named})
    result = check("pull_request", payload, PullClient(labels=(named,)))
    assert result.acceptance is not None and result.acceptance.label == named
    # the event's label must be on the pull request as GitHub has it now
    assert check("pull_request", payload, PullClient(labels=(LABEL,))).acceptance is None
    # a lookalike without the colon is another label
    lookalike = labeled_event(label={"name": f"{LABEL}able"})
    assert check("pull_request", lookalike, PullClient(labels=(f"{LABEL}able",))).acceptance is None
    # a fork's run takes the label the labelling recorded, naming rows or not
    client = PullClient(labels=("bug", named), comments=[record_comment(label=named)])
    fork = check("workflow_run", workflow_run_event(), client)
    assert fork.acceptance is not None and fork.acceptance.label == named
