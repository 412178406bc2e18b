"""The GitHub client and the sticky comment against GitHub's own OpenAPI description.

Every request the client sends is validated against the vendored description, and every
canned answer is either built from the description's own examples and validated too, or
marked as documented elsewhere (rate limits, 5xx). Sleeping goes through a fake clock.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
import requests
from github_contract import (
    Canned,
    ContractAdapter,
    api_url,
    example,
    header_example,
    session_with,
    validate_request,
)
from github_fakes import FakeClock
from openapi_core.validation.request.exceptions import RequestValidationError

from compilegate.github import (
    GitHubClient,
    GitHubForbidden,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubServerError,
    GitHubValidationFailed,
    comment_marker,
    upsert_sticky_comment,
)

API = api_url()
REPO = "octo-org/trainer"
PR = 42
TOKEN = "ghs_contract-test-token"
LIST_COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"
DOWNLOAD = "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"
COMMENTS_URL = f"{API}/repos/{REPO}/issues/{PR}/comments"
MARKER = comment_marker("train-step")
RATE_LIMIT_ELSEWHERE = "rate-limit answers are documented once, in 'Rate limits for the REST API'"
OUTAGE_ELSEWHERE = "GitHub may answer any request with a 5xx; few operations list them"


def comment(comment_id: int, body: str, *, login: str = "github-actions[bot]", kind: str = "Bot"):
    """An issue comment from the description's example, with our id, body and author."""
    payload = example(LIST_COMMENTS, "get", "200")[0]
    payload["id"] = comment_id
    payload["body"] = body
    payload["url"] = payload["url"].rsplit("/", 1)[0] + f"/{comment_id}"
    payload["html_url"] = payload["html_url"].split("#")[0] + f"#issuecomment-{comment_id}"
    payload["user"]["login"] = login
    payload["user"]["type"] = kind
    return payload


def created(comment_id: int, body: str) -> Canned:
    payload = comment(comment_id, body)
    return Canned(201, payload, headers={"Location": payload["url"]})


def client_for(
    answers: list[Any], **options: Any
) -> tuple[GitHubClient, ContractAdapter, FakeClock]:
    adapter = ContractAdapter(answers, api_root=API)
    clock = FakeClock()
    client = GitHubClient(
        session_with(adapter), API, TOKEN, sleep=clock.sleep, clock=clock.clock, **options
    )
    return client, adapter, clock


def link(*pages: tuple[str, int]) -> dict[str, str]:
    return {
        "Link": ", ".join(
            f'<{COMMENTS_URL}?per_page=100&page={n}>; rel="{rel}"' for rel, n in pages
        )
    }


def test_the_contract_check_itself_rejects_a_wrong_request() -> None:
    """Guard for every test below: a misspelled field would not pass unnoticed."""
    bad = requests.Request("POST", COMMENTS_URL, json={"bdy": "typo"}).prepare()
    with pytest.raises(RequestValidationError):
        validate_request(bad)
    good = requests.Request("POST", COMMENTS_URL, json={"body": "ok"}).prepare()
    validate_request(good)


def test_first_comment_lists_then_posts_with_the_marker_first() -> None:
    someone_else = comment(7, "LGTM", login="octocat", kind="User")
    client, adapter, _ = client_for([Canned(200, [someone_else]), created(8, f"{MARKER}\nreport")])

    outcome = upsert_sticky_comment(client, REPO, PR, MARKER, "report")

    assert (outcome.action, outcome.id) == ("created", 8)
    assert outcome.url.endswith("#issuecomment-8")
    assert [(s.method, s.url) for s in adapter.sent] == [
        ("GET", f"{COMMENTS_URL}?per_page=100"),
        ("POST", COMMENTS_URL),
    ]
    assert adapter.sent[1].json == {"body": f"{MARKER}\nreport"}
    for sent in adapter.sent:
        assert sent.headers["Authorization"] == f"Bearer {TOKEN}"
        assert sent.headers["Accept"] == "application/vnd.github+json"
        assert sent.headers["X-GitHub-Api-Version"] == "2022-11-28"
        assert sent.headers["User-Agent"].startswith("compilegate/")


def test_update_finds_the_marker_on_page_three_of_three() -> None:
    page1 = [comment(i, f"chatter {i}", login="octocat", kind="User") for i in range(1, 4)]
    page2 = [comment(i, f"chatter {i}", login="octocat", kind="User") for i in range(4, 7)]
    page3 = [comment(7, f"{MARKER}\nold report"), comment(8, "thanks!", login="octocat")]
    updated = comment(7, f"{MARKER}\nnew report")
    client, adapter, _ = client_for(
        [
            Canned(200, page1, headers=link(("next", 2), ("last", 3))),
            Canned(200, page2, headers=link(("prev", 1), ("next", 3), ("last", 3))),
            Canned(200, page3, headers=link(("prev", 2), ("first", 1))),
            Canned(200, updated),
        ]
    )

    outcome = upsert_sticky_comment(client, REPO, PR, MARKER, "new report")

    assert (outcome.action, outcome.id, outcome.older_duplicate_ids) == ("updated", 7, ())
    assert [(s.method, s.url) for s in adapter.sent] == [
        ("GET", f"{COMMENTS_URL}?per_page=100"),
        ("GET", f"{COMMENTS_URL}?per_page=100&page=2"),  # the Link URL, as given
        ("GET", f"{COMMENTS_URL}?per_page=100&page=3"),
        ("PATCH", f"{API}/repos/{REPO}/issues/comments/7"),
    ]
    assert adapter.sent[-1].json == {"body": f"{MARKER}\nnew report"}


def test_secondary_rate_limit_waits_retry_after_then_posts() -> None:
    # issues/create-comment documents 403 (Basic Error): this answer is validated as such.
    limited = Canned(
        403,
        {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes.",
            "documentation_url": "https://docs.example/rest/overview/rate-limits-for-the-rest-api",
        },
        headers={"retry-after": "7"},
    )
    client, adapter, clock = client_for([Canned(200, []), limited, created(9, MARKER)])

    outcome = upsert_sticky_comment(client, REPO, PR, MARKER, "report")

    assert outcome.action == "created"
    assert clock.sleeps_s == [7.0]
    assert [s.method for s in adapter.sent] == ["GET", "POST", "POST"]


def test_primary_rate_limit_waits_until_the_reset() -> None:
    clock_start = FakeClock().now_epoch_s
    limited = Canned(
        429,
        {"message": "API rate limit exceeded for installation ID 1."},
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(clock_start) + 30)},
        off_spec=RATE_LIMIT_ELSEWHERE,
    )
    client, adapter, clock = client_for([limited, Canned(200, [comment(3, f"{MARKER}\nx")])])

    comments = list(client.iter_issue_comments(REPO, PR))

    assert [c.id for c in comments] == [3]
    assert clock.sleeps_s == [31.0]  # until the reset, plus a second for clock skew
    assert len(adapter.sent) == 2


def test_a_wait_past_the_cap_raises_without_sleeping() -> None:
    limited = Canned(
        403,
        {"message": "You have exceeded a secondary rate limit."},
        headers={"retry-after": "3600"},
        off_spec=RATE_LIMIT_ELSEWHERE,
    )
    client, _, clock = client_for([limited], max_total_wait_s=300)

    with pytest.raises(GitHubRateLimited, match="3600 s more would pass the 300 s wait cap"):
        list(client.iter_issue_comments(REPO, PR))
    assert clock.sleeps_s == []


def test_body_too_long_is_a_validation_error_with_githubs_reason() -> None:
    # GitHub's answer, as quoted in contracts.md (b); update-comment documents 422.
    too_long = Canned(
        422,
        {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "IssueComment",
                    "code": "unprocessable",
                    "field": "data",
                    "message": "Body is too long (maximum is 65536 characters)",
                }
            ],
            "documentation_url": "https://docs.example/rest/issues/comments#update-an-issue-comment",
        },
    )
    client, _, _ = client_for([too_long])

    with pytest.raises(GitHubValidationFailed, match="Body is too long") as raised:
        client.update_issue_comment(REPO, 7, "x" * 1000)
    assert raised.value.status == 422
    assert raised.value.errors[0]["code"] == "unprocessable"


def test_a_body_over_the_limit_is_refused_before_sending() -> None:
    client, adapter, _ = client_for([])

    with pytest.raises(GitHubValidationFailed, match="65537 characters"):
        client.create_issue_comment(REPO, PR, "x" * 65_537)
    assert adapter.sent == []


def test_fork_read_only_token_is_forbidden_and_says_so() -> None:
    forbidden = Canned(
        403,
        {
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.example/rest/issues/comments#create-an-issue-comment",
            "status": "403",
        },
    )
    client, adapter, clock = client_for([Canned(200, []), forbidden])

    with pytest.raises(GitHubForbidden) as raised:
        upsert_sticky_comment(client, REPO, PR, MARKER, "report")
    assert raised.value.read_only_token
    assert raised.value.status == 403
    assert clock.sleeps_s == []  # not mistaken for a rate limit
    assert [s.method for s in adapter.sent] == ["GET", "POST"]


def test_pull_request_gone_is_not_found() -> None:
    gone = Canned(404, {"message": "Not Found", "documentation_url": "https://docs.example/rest"})
    client, _, _ = client_for([gone])

    with pytest.raises(GitHubNotFound, match="404"):
        client.get_pull_request(REPO, PR)


def test_server_errors_twice_then_ok_backs_off_exponentially() -> None:
    # pulls/get documents 500 and 503: those answers are validated as well.
    pr_example = example("/repos/{owner}/{repo}/pulls/{pull_number}", "get", "200")
    # GitHub's own example lacks the team `type` its schema requires (added to the schema
    # later); without this line the contract check rejects GitHub's example.
    pr_example["requested_teams"][0]["type"] = "organization"
    outage = {"message": "Service Unavailable"}
    client, adapter, clock = client_for(
        [Canned(503, outage), Canned(500, outage), Canned(200, pr_example)]
    )

    pull = client.get_pull_request(REPO, PR)

    assert (pull.number, pull.head_sha) == (pr_example["number"], pr_example["head"]["sha"])
    assert clock.sleeps_s == [1.0, 2.0]
    assert len(adapter.sent) == 3


def test_server_errors_that_persist_raise_after_the_attempts() -> None:
    outage = Canned(502, {"message": "Bad Gateway"}, off_spec=OUTAGE_ELSEWHERE)
    client, adapter, _ = client_for([outage] * 4, max_attempts=4)

    with pytest.raises(GitHubServerError, match="502 after 4 attempts"):
        list(client.iter_issue_comments(REPO, PR))
    assert len(adapter.sent) == 4


def test_a_failed_post_is_not_retried_blindly_but_looked_for_first() -> None:
    """A POST answered 502 may have created the comment: list again before posting again."""
    landed = comment(11, f"{MARKER}\nreport")
    outage = Canned(502, {"message": "Bad Gateway"}, off_spec=OUTAGE_ELSEWHERE)
    client, adapter, _ = client_for([Canned(200, []), outage, Canned(200, [landed])])

    outcome = upsert_sticky_comment(client, REPO, PR, MARKER, "report")

    assert (outcome.action, outcome.id) == ("created", 11)
    assert [s.method for s in adapter.sent] == ["GET", "POST", "GET"]


def test_rate_limit_and_pull_request_parse_from_githubs_examples() -> None:
    rate = example("/rate_limit", "get", "200")
    client, adapter, _ = client_for(
        [Canned(200, rate, headers={"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999"})]
    )

    limit = client.get_rate_limit()

    assert (limit.limit, limit.remaining) == (5000, 4999)
    assert adapter.sent[0].url == f"{API}/rate_limit"


def _zip_with(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


def test_artifacts_are_listed_across_pages_and_downloaded_without_the_token() -> None:
    listing = example("/repos/{owner}/{repo}/actions/artifacts", "get", "200")
    first, second = listing["artifacts"]
    second["name"] = first["name"]
    second["workflow_run"]["head_branch"] = "feature"
    expired = dict(first, id=12, expired=True)
    artifacts_url = f"{API}/repos/{REPO}/actions/artifacts"
    page2_url = f"{artifacts_url}?per_page=100&name={first['name']}&page=2"
    # The Location example of actions/download-artifact: a signed URL on another host.
    blob_url = header_example(DOWNLOAD, "get", "302", "Location")
    blob = _zip_with("result.json", '{"schema_version": 1}')
    client, adapter, _ = client_for(
        [
            Canned(
                200,
                {"total_count": 3, "artifacts": [first, second]},
                headers={"Link": f'<{page2_url}>; rel="next"'},
            ),
            Canned(200, {"total_count": 3, "artifacts": [expired]}),
            Canned(302, headers={"Location": blob_url}),
            Canned(200, raw_body=blob, headers={"Content-Type": "application/zip"}),
        ]
    )

    found = list(client.list_repo_artifacts(REPO, name=first["name"], head_branch="main"))
    data = client.download_artifact_zip(REPO, found[0].id)

    assert [a.id for a in found] == [first["id"]]  # other branch and expired ones skipped
    assert zipfile.ZipFile(io.BytesIO(data)).read("result.json") == b'{"schema_version": 1}'
    listing_sent, page2_sent, api_sent, blob_sent = adapter.sent
    assert listing_sent.url == f"{artifacts_url}?per_page=100&name={first['name']}"
    assert page2_sent.url == page2_url
    assert api_sent.url == f"{artifacts_url}/{first['id']}/zip"
    assert api_sent.headers["Authorization"] == f"Bearer {TOKEN}"
    assert blob_sent.url == blob_url
    assert "Authorization" not in blob_sent.headers


def test_pulls_get_gives_the_labels_and_author_acceptance_checks() -> None:
    """github/acceptance.py re-reads the pull request: its labels, author and head commit
    come from pulls/get as GitHub documents it (the request and answer validated)."""
    pr_example = example("/repos/{owner}/{repo}/pulls/{pull_number}", "get", "200")
    pr_example["requested_teams"][0]["type"] = "organization"  # see the test above
    pr_example["labels"][0]["name"] = "compilegate: accept"
    client, adapter, _ = client_for([Canned(200, pr_example)])

    pull = client.get_pull_request(REPO, PR)

    assert "compilegate: accept" in pull.labels
    assert pull.author_login == pr_example["user"]["login"]
    assert pull.head_sha == pr_example["head"]["sha"]
    assert [s.method for s in adapter.sent] == ["GET"]
