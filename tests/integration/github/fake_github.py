"""A small GitHub, in memory, over real HTTP on 127.0.0.1 — and strict about the contract.

Serves the operations compilegate uses under `http://127.0.0.1:<port>/api/v3` (the layout of
a GitHub Enterprise Server), plus a second server on another port standing in for the blob
store artifact downloads redirect to. Every request it receives is validated against the
vendored OpenAPI description before it is answered, and every answer it gives is validated
too; what fails lands in `violations`, which the tests require to be empty. Payloads are
built from the description's own examples, so they have every field GitHub sends.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from github_contract import (
    build_response,
    describe,
    example,
    validate_exchange,
    validate_request,
)
from openapi_core.exceptions import OpenAPIError

REPO = "octo-org/trainer"
TOKEN = "ghs_integration-test-token"
READ_ONLY_TOKEN = "ghs_fork-read-only-token"
"""What GitHub hands a fork's pull_request run: it may read, not write."""
API_PREFIX = "/api/v3"
READ_ONLY_MESSAGE = "Resource not accessible by integration"
DOCS = "https://docs.example/rest"  # GitHub's errors carry one; never fetched
EVENT_FILE = Path(__file__).with_name("data") / "pull_request.synchronize.json"


@dataclass
class Seen:
    method: str
    path: str
    """Path and query as received, e.g. /api/v3/repos/o/r/issues/1/comments?per_page=100."""
    headers: dict[str, str]


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None


class FakeGitHub:
    """One repository's pull requests, comments and artifacts."""

    def __init__(self, repo: str, *, token: str, read_only_tokens: frozenset[str] = frozenset()):
        self.repo = repo
        self.token = token
        self.read_only_tokens = read_only_tokens
        self.lock = threading.Lock()
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.artifacts: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []
        self.blobs: dict[str, bytes] = {}
        self.seen: list[Seen] = []
        self.blob_seen: list[Seen] = []
        self.violations: list[str] = []
        self.injected: list[tuple[str, Reply]] = []
        self._next_id = 5000
        self._api = _serve(self, _ApiHandler)
        self._blob = _serve(self, _BlobHandler)

    # --- set-up ---------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self._api.server_address[1]}{API_PREFIX}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self._api.server_address[1]}"

    def close(self) -> None:
        for server in (self._api, self._blob):
            server.shutdown()
            server.server_close()

    def open_pull_request(
        self,
        number: int,
        head_sha: str,
        head_repo: str,
        *,
        labels: tuple[str, ...] | None = None,
        author: str | None = None,
        head_ref: str | None = None,
    ) -> None:
        """An open pull request; `labels`, `author` and `head_ref` replace the example's."""
        pull = example("/repos/{owner}/{repo}/pulls/{pull_number}", "get", "200")
        if labels is not None:
            shape = pull["labels"][0]
            pull["labels"] = [dict(shape, id=i + 1, name=name) for i, name in enumerate(labels)]
        if author is not None:
            pull["user"]["login"] = author
        if head_ref is not None:
            pull["head"]["ref"] = head_ref
        pull["requested_teams"] = []  # GitHub's example team lacks a field its schema requires
        pull.update(number=number, state="open")
        pull["html_url"] = f"{self.web_url}/{self.repo}/pull/{number}"
        pull["head"]["sha"] = head_sha
        pull["head"]["repo"]["full_name"] = head_repo
        pull["head"]["repo"]["owner"]["login"] = head_repo.split("/")[0]
        pull["base"]["repo"]["full_name"] = self.repo
        with self.lock:
            self.pulls[number] = pull
            self.comments.setdefault(number, [])

    def push(self, number: int, head_sha: str) -> None:
        """The pull request's branch moved to `head_sha` (the labels stay, as on GitHub)."""
        with self.lock:
            self.pulls[number]["head"]["sha"] = head_sha

    def add_comment(self, number: int, body: str, *, login: str, kind: str = "User") -> int:
        with self.lock:
            return self._add_comment(number, body, login, kind)["id"]

    def add_workflow_run(
        self,
        workflow: str = "baseline-refresh.yml",
        *,
        event: str = "push",
        conclusion: str | None = "success",
        head_branch: str = "main",
        head_repo: str | None = None,
    ) -> int:
        """A finished run of `.github/workflows/<workflow>`; by default a trusted one (a
        successful push to main of this repository). Newest first, as GitHub lists them."""
        run = example("/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", "get", "200")
        run = run["workflow_runs"][0]
        with self.lock:
            self._next_id += 1
            run.update(
                id=self._next_id, event=event, conclusion=conclusion, head_branch=head_branch,
                status="completed", path=f".github/workflows/{workflow}",
            )  # fmt: skip
            run["head_repository"]["full_name"] = head_repo or self.repo
            run["repository"]["full_name"] = self.repo
            self.runs.insert(0, run)
        return run["id"]

    def add_artifact(
        self,
        name: str,
        data: bytes,
        *,
        head_branch: str,
        expired: bool = False,
        run_id: int | None = None,
    ):
        """An artifact uploaded by run `run_id` (default: a new trusted baseline-workflow run
        on `head_branch`)."""
        if run_id is None:
            run_id = self.add_workflow_run(head_branch=head_branch)
        artifact = example("/repos/{owner}/{repo}/actions/artifacts", "get", "200")["artifacts"][0]
        with self.lock:
            self._next_id += 1
            artifact.update(id=self._next_id, name=name, size_in_bytes=len(data), expired=expired)
            artifact["workflow_run"].update(id=run_id, head_branch=head_branch)
            # Newest first, as GitHub lists them.
            self.artifacts.insert(0, artifact)
            self.blobs[str(self._next_id)] = data
        return artifact["id"]

    def inject(self, method: str, path_pattern: str, reply: Reply) -> None:
        """Answer the next matching request with `reply` instead (once)."""
        with self.lock:
            self.injected.append((f"{method} {path_pattern}", reply))

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        with self.lock:
            return copy.deepcopy(self.comments.get(number, []))

    # --- the API ----------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        """Validate, route, validate the answer; called by the handler thread."""
        url = self.web_url + target
        prepared = requests.Request(method, url, headers=headers, data=body or None).prepare()
        with self.lock:
            self.seen.append(Seen(method, target, headers))
            try:
                validate_request(prepared)
            except OpenAPIError as exc:
                self.violations.append(f"request {method} {target}: {describe(exc)}")
                return Reply(
                    400, {"message": "request breaks the contract", "documentation_url": DOCS}
                )
            try:
                reply = self._route(method, target, headers, body)
            except _Answer as answer:
                reply = answer.reply
            except Exception as exc:  # a bug here must fail the test, not hang the client
                self.violations.append(f"fake GitHub crashed on {method} {target}: {exc!r}")
                return Reply(500, {"message": "fake GitHub crashed"})
            response = build_response(prepared, reply.status, reply.body, reply.headers, reply.raw)
            try:
                note = validate_exchange(prepared, response)
            except OpenAPIError as exc:
                note = f"response to {method} {target}: {describe(exc)}"
            if note:
                self.violations.append(note)
        return reply

    def _route(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)
        path = parts.path.removeprefix(API_PREFIX)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        for i, (pattern, reply) in enumerate(self.injected):
            if re.fullmatch(pattern, f"{method} {path}"):
                del self.injected[i]
                return reply
        if headers.get("Authorization") not in {
            f"Bearer {t}" for t in {self.token, *self.read_only_tokens}
        }:
            raise _Answer(Reply(401, {"message": "Bad credentials", "documentation_url": DOCS}))
        repo = f"/repos/{self.repo}"
        if path == "/rate_limit" and method == "GET":
            return Reply(200, example("/rate_limit", "get", "200"))
        if (m := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path)) and method == "GET":
            return self._page(target, self._issue(int(m[1])), query)
        if (m := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path)) and method == "POST":
            text = self._body_text(headers, body)
            self._issue(int(m[1]))  # 404 for a PR that does not exist
            created = self._add_comment(int(m[1]), text, "github-actions[bot]", "Bot")
            return Reply(201, created, {"Location": created["url"]})
        if (m := re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)) and method == "PATCH":
            text = self._body_text(headers, body)
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == int(m[1]):
                        comment["body"] = text
                        comment["updated_at"] = "2025-06-03T10:00:00Z"
                        return Reply(200, copy.deepcopy(comment))
            raise _Answer(Reply(404, {"message": "Not Found", "documentation_url": DOCS}))
        if (m := re.fullmatch(rf"{repo}/pulls/(\d+)", path)) and method == "GET":
            if int(m[1]) not in self.pulls:
                raise _Answer(Reply(404, {"message": "Not Found", "documentation_url": DOCS}))
            return Reply(200, copy.deepcopy(self.pulls[int(m[1])]))
        if path == repo and method == "GET":
            found = example("/repos/{owner}/{repo}", "get", "200", "default-response")
            for incomplete in ("source", "parent", "template_repository"):  # examples lack fields
                found.pop(incomplete, None)
            found.update(full_name=self.repo, default_branch="main", language="Python")
            return Reply(200, found)
        if (m := re.fullmatch(rf"{repo}/actions/workflows/([^/]+)/runs", path)) and method == "GET":
            chosen = [
                r for r in self.runs
                if r["path"] == f".github/workflows/{m[1]}"
                and query.get("branch") in (None, r["head_branch"])
                and query.get("status") in (None, r["status"], r["conclusion"])
            ]  # fmt: skip
            page = self._page(target, chosen, query)
            page.body = {"total_count": len(chosen), "workflow_runs": page.body}
            return page
        if (m := re.fullmatch(rf"{repo}/actions/runs/(\d+)/artifacts", path)) and method == "GET":
            chosen = [
                a for a in self.artifacts
                if a["workflow_run"]["id"] == int(m[1]) and query.get("name") in (None, a["name"])
            ]  # fmt: skip
            page = self._page(target, chosen, query)
            page.body = {"total_count": len(chosen), "artifacts": page.body}
            return page
        if path == f"{repo}/pulls" and method == "GET":
            head = query.get("head")
            chosen = [
                pull for _, pull in sorted(self.pulls.items())
                if pull["state"] == query.get("state", "open")
                and head in (None, f"{pull['head']['repo']['owner']['login']}:"
                                   f"{pull['head']['ref']}")
            ]  # fmt: skip
            return self._page(target, chosen, query)
        if path == f"{repo}/actions/artifacts" and method == "GET":
            chosen = [a for a in self.artifacts if query.get("name") in (None, a["name"])]
            page = self._page(target, chosen, query)
            page.body = {"total_count": len(chosen), "artifacts": page.body}
            return page
        if (m := re.fullmatch(rf"{repo}/actions/artifacts/(\d+)/zip", path)) and method == "GET":
            if m[1] not in self.blobs:
                raise _Answer(Reply(410, {"message": "Gone", "documentation_url": DOCS}))
            blob_port = self._blob.server_address[1]
            location = f"http://127.0.0.1:{blob_port}/blob/{m[1]}?sig=signed-for-60s"
            return Reply(302, headers={"Location": location})
        raise _Answer(Reply(404, {"message": "Not Found", "documentation_url": DOCS}))

    def _issue(self, number: int) -> list[dict[str, Any]]:
        if number not in self.pulls:
            raise _Answer(Reply(404, {"message": "Not Found", "documentation_url": DOCS}))
        return self.comments[number]

    def _body_text(self, headers: dict[str, str], body: bytes) -> str:
        token = headers.get("Authorization", "").removeprefix("Bearer ")
        if token in self.read_only_tokens:
            raise _Answer(
                Reply(
                    403, {"message": READ_ONLY_MESSAGE, "documentation_url": DOCS, "status": "403"}
                )
            )
        text = json.loads(body)["body"]
        if len(text) > 65_536:
            error = {
                "resource": "IssueComment",
                "code": "unprocessable",
                "field": "data",
                "message": "Body is too long (maximum is 65536 characters)",
            }
            raise _Answer(
                Reply(
                    422,
                    {"message": "Validation Failed", "errors": [error], "documentation_url": DOCS},
                )
            )
        return text

    def _add_comment(self, number: int, body: str, login: str, kind: str) -> dict[str, Any]:
        comment = example("/repos/{owner}/{repo}/issues/{issue_number}/comments", "get", "200")[0]
        self._next_id += 1
        comment.update(
            id=self._next_id,
            body=body,
            url=f"{self.api_url}/repos/{self.repo}/issues/comments/{self._next_id}",
            html_url=f"{self.web_url}/{self.repo}/pull/{number}#issuecomment-{self._next_id}",
            issue_url=f"{self.api_url}/repos/{self.repo}/issues/{number}",
        )
        comment["user"].update(login=login, type=kind)
        self.comments.setdefault(number, []).append(comment)
        return copy.deepcopy(comment)

    def _page(self, target: str, items: list[Any], query: dict[str, str]) -> Reply:
        """One page and GitHub's Link header (absolute URLs carrying per_page)."""
        per_page = min(int(query.get("per_page", 30)), 100)
        page = int(query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = copy.deepcopy(items[(page - 1) * per_page : page * per_page])
        base = self.web_url + urlsplit(target).path
        keep = "".join(f"&{k}={v}" for k, v in query.items() if k not in ("per_page", "page"))
        links = []
        for rel, number in (("prev", page - 1), ("next", page + 1), ("last", last), ("first", 1)):
            if 1 <= number <= last and number != page:
                links.append(f'<{base}?per_page={per_page}{keep}&page={number}>; rel="{rel}"')
        return Reply(200, chunk, {"Link": ", ".join(links)} if links else {})

    def blob(self, target: str, headers: dict[str, str]) -> Reply:
        with self.lock:
            self.blob_seen.append(Seen("GET", target, headers))
            key = urlsplit(target).path.removeprefix("/blob/")
            if key not in self.blobs:
                return Reply(404, raw=b"no such blob")
            return Reply(200, raw=self.blobs[key], headers={"Content-Type": "application/zip"})


class _Answer(Exception):
    """Raised inside routing to answer early (an error reply)."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.status)
        self.reply = reply


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, reply: Reply) -> None:
        raw = reply.raw
        headers = dict(reply.headers)
        if raw is None and reply.body is not None:
            raw = json.dumps(reply.body).encode()
            headers.setdefault("Content-Type", "application/json; charset=utf-8")
        raw = raw or b""
        self.send_response(reply.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _request_parts(self) -> tuple[dict[str, str], bytes]:
        length = int(self.headers.get("Content-Length") or 0)
        return dict(self.headers.items()), self.rfile.read(length) if length else b""


class _ApiHandler(_Handler):
    def _any(self) -> None:
        headers, body = self._request_parts()
        self._send(self.fake.handle(self.command, self.path, headers, body))

    do_GET = do_POST = do_PATCH = do_DELETE = _any


class _BlobHandler(_Handler):
    def do_GET(self) -> None:
        headers, _ = self._request_parts()
        self._send(self.fake.blob(self.path, headers))


def _serve(fake: FakeGitHub, handler: type[_Handler]) -> ThreadingHTTPServer:
    bound = type(handler.__name__, (handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
    server.daemon_threads = True
    threading.Thread(
        target=server.serve_forever, args=(0.05,), name="fake-github", daemon=True
    ).start()
    return server
