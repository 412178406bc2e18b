"""Which comment is ours: one per key, never someone else's."""

from __future__ import annotations

import dataclasses

import cmarkgfm
import pytest
from github_fakes import REPO, FakeCommentClient

from compilegate.github import comment_marker, upsert_sticky_comment
from compilegate.github.models import IssueComment
from compilegate.github.sticky_comment import is_ours, is_written_by, with_marker

MARKER = comment_marker("train-step")


def test_the_marker_is_an_html_comment_github_does_not_show() -> None:
    html = cmarkgfm.github_flavored_markdown_to_html(
        f"{MARKER}\n## compilegate", options=cmarkgfm.Options.CMARK_OPT_UNSAFE
    )
    assert MARKER in html  # kept in the HTML as a comment ...
    assert html.replace(MARKER, "").strip() == "<h2>compilegate</h2>"  # ... and nothing shown


def test_five_runs_leave_exactly_one_comment_with_the_last_report() -> None:
    client = FakeCommentClient()
    client.add("LGTM")

    outcomes = [upsert_sticky_comment(client, REPO, 42, MARKER, f"run {i}") for i in range(5)]

    ours = [c for c in client.comments if c.body.startswith(MARKER)]
    assert len(ours) == 1
    assert ours[0].body == f"{MARKER}\nrun 4"
    assert [o.action for o in outcomes] == ["created"] + ["updated"] * 4
    assert {o.id for o in outcomes} == {ours[0].id}


def test_a_user_quoting_the_marker_is_never_overwritten() -> None:
    client = FakeCommentClient()
    quoted = client.add(f"> {MARKER}\nwhy does the bot say this?")
    pasted = client.add(f"see below\n{MARKER}\nreport copied by hand", login="octocat")

    outcome = upsert_sticky_comment(client, REPO, 42, MARKER, "report")

    assert outcome.action == "created"
    assert client.comments[0] == quoted
    assert client.comments[1] == pasted


def test_posting_as_a_person_never_takes_over_their_hand_written_comments() -> None:
    """With a person's token the author check cannot tell bot from human: the first line does."""
    client = FakeCommentClient(author_login="alice", author_type="User")
    by_hand = client.add(f"Why is the {MARKER} in the old comment?", login="alice")
    quoted = client.add(f"> {MARKER}\n> report\n\nsee above", login="alice")

    outcome = upsert_sticky_comment(client, REPO, 42, MARKER, "report", author_login="alice")

    assert outcome.action == "created"
    assert client.comments[:2] == [by_hand, quoted]


def test_a_person_starting_a_comment_with_the_marker_is_ignored_and_named() -> None:
    client = FakeCommentClient()
    mimic = client.add(f"{MARKER}\nI am not the bot", login="octocat", kind="User")

    outcome = upsert_sticky_comment(client, REPO, 42, MARKER, "report")

    assert outcome.action == "created"
    assert outcome.ignored_ids == (mimic.id,)
    assert f"ignored {mimic.id}" in outcome.message
    assert client.comments[0].body == f"{MARKER}\nI am not the bot"


def test_with_a_persons_token_the_login_decides() -> None:
    client = FakeCommentClient(author_login="release-bot-user", author_type="User")
    other_bot = client.add(f"{MARKER}\nanother app's", login="other[bot]", kind="Bot")

    first = upsert_sticky_comment(client, REPO, 42, MARKER, "one", author_login="release-bot-user")
    second = upsert_sticky_comment(client, REPO, 42, MARKER, "two", author_login="release-bot-user")

    assert (first.action, second.action) == ("created", "updated")
    assert first.id == second.id != other_bot.id
    assert client.comments[0].body == f"{MARKER}\nanother app's"


def test_several_marked_comments_update_the_newest_and_say_so() -> None:
    client = FakeCommentClient()
    older = client.add(f"{MARKER}\nold 1", login="github-actions[bot]", kind="Bot")
    newer = client.add(f"{MARKER}\nold 2", login="github-actions[bot]", kind="Bot")

    outcome = upsert_sticky_comment(client, REPO, 42, MARKER, "new")

    assert (outcome.action, outcome.id) == ("updated", newer.id)
    assert outcome.older_duplicate_ids == (older.id,)
    assert "2 comments carried the marker" in outcome.message
    assert client.comments[0].body == f"{MARKER}\nold 1"
    assert client.calls[-1] == f"PATCH {newer.id}"


def test_other_keys_are_other_comments() -> None:
    client = FakeCommentClient()
    upsert_sticky_comment(client, REPO, 42, comment_marker("torch-2.9"), "a")
    upsert_sticky_comment(client, REPO, 42, comment_marker("torch-2.10"), "b")
    upsert_sticky_comment(client, REPO, 42, comment_marker("torch-2.9"), "c")

    assert [c.body.split("\n")[1] for c in client.comments] == ["c", "b"]


def test_with_marker_does_not_add_it_twice() -> None:
    assert with_marker(MARKER, f"{MARKER}\nx") == f"{MARKER}\nx"
    assert with_marker(MARKER, "x") == f"{MARKER}\nx"


@pytest.mark.parametrize("key", ["", "a-->b", "two\nlines", "has space", "-leading", "x" * 101])
def test_a_key_that_could_break_the_marker_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="comment key"):
        comment_marker(key)


def test_a_marker_spanning_lines_is_refused() -> None:
    with pytest.raises(ValueError, match="one line"):
        upsert_sticky_comment(FakeCommentClient(), REPO, 42, "<!--\nx -->", "body")


def test_another_apps_comment_with_the_marker_is_ignored_and_never_edited() -> None:
    """Issue 51, finding 7: any Bot's comment whose first line was the marker was ours, so
    compilegate edited another App's comment (and trusted its acceptance record)."""
    client = FakeCommentClient()
    other = client.add(f"{MARKER}\nechoed user text", login="some-other-app[bot]", kind="Bot")

    outcome = upsert_sticky_comment(client, REPO, 42, MARKER, "report")

    assert outcome.action == "created" and outcome.id != other.id
    assert outcome.ignored_ids == (other.id,)
    assert f"PATCH {other.id}" not in client.calls
    assert client.comments[0].body == f"{MARKER}\nechoed user text"


def test_with_an_app_token_its_own_bot_login_decides() -> None:
    client = FakeCommentClient(author_login="compilegate-app[bot]")
    actions = client.add(f"{MARKER}\nGITHUB_TOKEN's", login="github-actions[bot]", kind="Bot")

    first = upsert_sticky_comment(
        client, REPO, 42, MARKER, "one", author_login="compilegate-app[bot]"
    )
    second = upsert_sticky_comment(
        client, REPO, 42, MARKER, "two", author_login="compilegate-app[bot]"
    )

    assert (first.action, second.action) == ("created", "updated")
    assert first.id == second.id != actions.id
    assert second.ignored_ids == (actions.id,)


@pytest.mark.parametrize(
    ("login", "kind", "named", "ours"),
    [
        ("github-actions[bot]", "Bot", None, True),
        ("some-other-app[bot]", "Bot", None, False),
        ("renovate[bot]", "Bot", None, False),
        ("github-actions[bot]", "User", None, False),  # a [bot] login is an App's, a Bot
        ("octocat", "User", None, False),
        ("compilegate-app[bot]", "Bot", "compilegate-app[bot]", True),
        ("github-actions[bot]", "Bot", "compilegate-app[bot]", False),
        ("release-user", "User", "release-user", True),
        ("release-user", "Bot", "release-user", False),
        (None, None, None, False),  # a deleted account
    ],
)
def test_only_the_named_identity_writes_our_comments(
    login: str | None, kind: str | None, named: str | None, ours: bool
) -> None:
    comment = IssueComment(
        id=1, body=f"{MARKER}\nx", html_url="http://pr.test/1", author_login=login,
        author_type=kind, created_at="2025-01-01T00:00:00Z",
    )  # fmt: skip
    assert is_written_by(comment, named) is ours
    assert is_ours(comment, MARKER, named) is ours
    assert is_ours(dataclasses.replace(comment, body=f"x\n{MARKER}"), MARKER, named) is False
