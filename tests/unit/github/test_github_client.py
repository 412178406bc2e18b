"""GitHubClient's own rules: retries, waits, the token's reach, and typed one-line errors."""

from __future__ import annotations

import pytest
import requests
from github_fakes import REPO, Answer, FakeClock, ListAdapter, session_over

from compilegate.errors import CompilegateError
from compilegate.github import (
    GitHubClient,
    GitHubError,
    GitHubForbidden,
    GitHubRateLimited,
    GitHubTransportError,
    GitHubUnauthorized,
    GitHubUnexpectedResponse,
)

API = "http://api.test/api/v3"  # a GitHub Enterprise Server layout: the API under a path
TOKEN = "ghs_unit-test-token"


def make(answers: list, **options) -> tuple[GitHubClient, ListAdapter, FakeClock]:
    adapter = ListAdapter(answers)
    clock = FakeClock()
    client = GitHubClient(
        session_over(adapter), API, TOKEN, sleep=clock.sleep, clock=clock.clock, **options
    )
    return client, adapter, clock


def comment(comment_id: int, body: str = "hi") -> dict:
    return {
        "id": comment_id,
        "body": body,
        "html_url": f"http://pr.test/c/{comment_id}",
        "user": {"login": "octocat", "type": "User"},
        "created_at": "2025-01-01T00:00:00Z",
    }


def test_requests_go_under_the_api_path_with_the_documented_headers() -> None:
    client, adapter, _ = make([Answer(200, [])])

    list(client.iter_issue_comments(REPO, 42))

    sent = adapter.sent[0]
    assert sent.url == f"{API}/repos/{REPO}/issues/42/comments?per_page=100"
    assert sent.headers["Authorization"] == f"Bearer {TOKEN}"
    assert sent.headers["X-GitHub-Api-Version"] == "2022-11-28"


def test_without_a_token_no_authorization_header_is_sent() -> None:
    adapter = ListAdapter([Answer(200, [])])
    client = GitHubClient(session_over(adapter), API, None)

    list(client.iter_issue_comments(REPO, 1))

    assert "Authorization" not in adapter.sent[0].headers


def test_the_token_stays_out_of_repr() -> None:
    client, _, _ = make([])
    assert TOKEN not in repr(client)


def test_a_link_to_another_host_is_not_followed_with_the_token() -> None:
    client, adapter, _ = make(
        [Answer(200, [comment(1)], {"Link": '<http://evil.test/steal?page=2>; rel="next"'})]
    )

    with pytest.raises(GitHubUnexpectedResponse, match="not under the API URL"):
        list(client.iter_issue_comments(REPO, 42))
    assert len(adapter.sent) == 1


def test_a_link_that_loops_is_refused() -> None:
    page2 = f"{API}/repos/{REPO}/issues/42/comments?per_page=100&page=2"
    loop = {"Link": f'<{page2}>; rel="next"'}
    client, adapter, _ = make([Answer(200, [comment(1)], loop), Answer(200, [comment(2)], loop)])

    with pytest.raises(GitHubUnexpectedResponse, match="seen before"):
        list(client.iter_issue_comments(REPO, 42))
    assert len(adapter.sent) == 2


def test_secondary_limit_without_headers_waits_a_minute_then_doubles() -> None:
    limited = Answer(403, {"message": "You have exceeded a secondary rate limit"})
    client, _, clock = make([limited, limited, Answer(200, [])], max_total_wait_s=1000)

    assert list(client.iter_issue_comments(REPO, 42)) == []
    assert clock.sleeps_s == [60.0, 120.0]
    assert client.waited_s == 180.0


def test_retry_after_zero_forever_gives_up() -> None:
    limited = Answer(429, {"message": "slow down"}, {"retry-after": "0"})
    client, adapter, _ = make([limited] * 20)

    with pytest.raises(GitHubRateLimited, match="still limited after 8 retries"):
        list(client.iter_issue_comments(REPO, 42))
    assert len(adapter.sent) == 9


def test_the_wait_budget_is_shared_by_all_requests_of_a_client() -> None:
    limited = Answer(429, {"message": "slow down"}, {"retry-after": "40"})
    client, _, clock = make([limited, Answer(200, []), limited], max_total_wait_s=60)

    list(client.iter_issue_comments(REPO, 42))
    with pytest.raises(GitHubRateLimited):
        list(client.iter_issue_comments(REPO, 42))
    assert clock.sleeps_s == [40.0]


def test_a_plain_403_is_forbidden_not_a_rate_limit() -> None:
    client, _, clock = make([Answer(403, {"message": "Must have admin rights to Repository."})])

    with pytest.raises(GitHubForbidden) as raised:
        client.create_issue_comment(REPO, 42, "x")
    assert not raised.value.read_only_token
    assert clock.sleeps_s == []


def test_401_is_unauthorized() -> None:
    client, _, _ = make([Answer(401, {"message": "Bad credentials"})])

    with pytest.raises(GitHubUnauthorized, match="401: Bad credentials"):
        client.get_rate_limit()


def test_a_dropped_connection_is_retried_for_get() -> None:
    client, adapter, clock = make([requests.ConnectionError("reset"), Answer(200, [comment(3)])])

    assert [c.id for c in client.iter_issue_comments(REPO, 42)] == [3]
    assert clock.sleeps_s == [1.0]
    assert len(adapter.sent) == 2


def test_a_dropped_connection_is_not_retried_for_post() -> None:
    """The POST may have landed: retrying blindly could make a second comment."""
    client, adapter, _ = make([requests.ConnectionError("reset"), Answer(201, comment(4))])

    with pytest.raises(GitHubTransportError, match=r"POST .* failed after 1 attempt"):
        client.create_issue_comment(REPO, 42, "x")
    assert len(adapter.sent) == 1


def test_a_body_that_is_not_json_is_an_unexpected_response() -> None:
    client, _, _ = make([Answer(200, raw=b"<html>proxy error</html>")])

    with pytest.raises(GitHubUnexpectedResponse, match="not JSON"):
        client.get_rate_limit()


def test_a_payload_missing_a_needed_field_names_the_request() -> None:
    client, _, _ = make([Answer(200, [{"id": 1}])])

    with pytest.raises(GitHubUnexpectedResponse, match=r"GET /repos/.*/comments"):
        list(client.iter_issue_comments(REPO, 42))


def test_blob_download_drops_an_authorization_header_set_on_the_session() -> None:
    adapter = ListAdapter(
        [
            Answer(302, headers={"Location": "http://blobs.test/signed?sig=abc"}),
            Answer(200, raw=b"PK"),
        ]
    )
    session = session_over(adapter)
    session.headers["Authorization"] = "token leaked-if-sent"
    client = GitHubClient(session, API, TOKEN)

    assert client.download_artifact_zip(REPO, 11) == b"PK"
    api, blob = adapter.sent
    assert api.headers["Authorization"] == f"Bearer {TOKEN}"
    assert "Authorization" not in blob.headers


def test_a_download_larger_than_allowed_is_refused() -> None:
    adapter = ListAdapter(
        [Answer(302, headers={"Location": "http://blobs.test/z"}), Answer(200, raw=b"x" * 100)]
    )
    client = GitHubClient(session_over(adapter), API, TOKEN)

    with pytest.raises(GitHubUnexpectedResponse, match="larger than 10 bytes"):
        client.download_artifact_zip(REPO, 11, max_bytes=10)


def test_errors_are_compilegate_errors_with_one_line_messages() -> None:
    client, _, _ = make([Answer(404, {"message": "Not Found\nsecond line?"})])

    with pytest.raises(GitHubError) as raised:
        client.get_pull_request(REPO, 42)
    assert isinstance(raised.value, CompilegateError)
    assert raised.value.exit_code == 3
    assert (raised.value.status, raised.value.method) == (404, "GET")
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith(f"GitHub answered GET /repos/{REPO}/pulls/42 with 404")


@pytest.mark.parametrize("bad", ["ftp://x", "api.test", ""])
def test_a_bad_api_url_is_refused_at_construction(bad: str) -> None:
    with pytest.raises(ValueError, match="http"):
        GitHubClient(requests.Session(), bad, TOKEN)
