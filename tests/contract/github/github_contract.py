"""Check HTTP traffic against GitHub's own OpenAPI description, offline.

`ContractAdapter` is a requests transport: mounted on a Session, it validates every request
the client sends to the API against the vendored description (openapi-core), answers from a
queue of canned responses, and validates each canned response too, so neither our requests
nor our idea of GitHub's answers can drift from the contract. Responses GitHub documents
elsewhere (rate limits, most 5xx) must say so with `off_spec=<reason>`; anything else
undocumented fails the test.

The integration tests' local server uses `validate_exchange` on the same description.
"""

from __future__ import annotations

import copy
import functools
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse
from openapi_core.exceptions import OpenAPIError
from openapi_core.templating.responses.exceptions import ResponseNotFound
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

SPEC_PATH = Path(__file__).with_name("github-rest-subset.openapi.json")
SPEC_SHA256 = "3258a14025c18779beb8137f213b0e72d3a89251ed21063ccdbb47752a4054ee"
# Test-only addition: the local fake server of tests/integration/github serves the API under
# http://127.0.0.1:<port>/api/v3 (the layout of a GitHub Enterprise Server).
LOOPBACK_SERVER = {
    "url": "http://127.0.0.1:{port}/api/v3",
    "variables": {"port": {"default": "80"}},
}


@functools.lru_cache(maxsize=1)
def spec_dict() -> dict[str, Any]:
    """The vendored description, parsed once. Read it, never change it: it is shared."""
    return json.loads(SPEC_PATH.read_text(encoding="utf-8"))


def api_url() -> str:
    """The API root as the description itself states it (`servers[0].url`)."""
    return spec_dict()["servers"][0]["url"]


@functools.lru_cache(maxsize=1)
def openapi() -> OpenAPI:
    """The description as an openapi-core validator (loaded once: it takes ~0.5 s)."""
    document = dict(spec_dict())
    document["servers"] = [*document["servers"], LOOPBACK_SERVER]
    return OpenAPI.from_dict(document)


def example(path: str, method: str, status: str, name: str = "default") -> Any:
    """A response example from the description: GitHub's own sample payload."""
    operation = spec_dict()["paths"][path][method]
    content = operation["responses"][status]["content"]["application/json"]
    return copy.deepcopy(content["examples"][name]["value"])


def header_example(path: str, method: str, status: str, header: str) -> str:
    """A response header's example value from the description."""
    operation = spec_dict()["paths"][path][method]
    return operation["responses"][status]["headers"][header]["example"]


def documented_statuses(method: str, url: str) -> set[int] | None:
    """Status codes the description lists for this request's operation (None: no operation)."""
    path = urlsplit(url).path
    for prefix in ("/api/v3",):
        if path.startswith(prefix + "/"):
            path = path[len(prefix) :]
    segments = path.strip("/").split("/")
    for template, operations in spec_dict()["paths"].items():
        parts = template.strip("/").split("/")
        if len(parts) != len(segments):
            continue
        if all(p.startswith("{") or p == s for p, s in zip(parts, segments)):
            operation = operations.get(method.lower())
            if operation is not None:
                return {int(code) for code in operation["responses"] if code.isdigit()}
    return None


def validate_request(request: requests.PreparedRequest) -> None:
    """Raise (an openapi-core error) unless the description accepts this request."""
    openapi().validate_request(RequestsOpenAPIRequest(request))


def validate_response(request: requests.PreparedRequest, response: requests.Response) -> None:
    """Raise unless the description accepts this answer to this request."""
    openapi().validate_response(RequestsOpenAPIRequest(request), RequestsOpenAPIResponse(response))


def build_response(
    request: requests.PreparedRequest,
    status: int,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    raw_body: bytes | None = None,
) -> requests.Response:
    """A `requests.Response` as a transport would return it (body readable as a stream)."""
    response = requests.Response()
    response.status_code = status
    response.reason = {200: "OK", 201: "Created", 302: "Found"}.get(status, "Status")
    response.headers = CaseInsensitiveDict(headers or {})
    if raw_body is None and body is not None:
        raw_body = json.dumps(body).encode("utf-8")
        response.headers.setdefault("Content-Type", "application/json; charset=utf-8")
    response.raw = io.BytesIO(raw_body or b"")
    response.url = request.url or ""
    response.request = request
    response.encoding = "utf-8"
    return response


def validate_exchange(request: requests.PreparedRequest, response: requests.Response) -> str:
    """Validate both; return '' when the status is documented, else a note saying it is not."""
    validate_request(request)
    documented = documented_statuses(request.method or "GET", request.url or "")
    if documented is not None and response.status_code not in documented:
        return f"{response.status_code} not documented for {request.method} {request.url}"
    try:
        validate_response(request, response)
    except ResponseNotFound:  # pragma: no cover - covered by `documented` above
        return f"{response.status_code} not documented for {request.method} {request.url}"
    return ""


def describe(exc: BaseException) -> str:
    """openapi-core's error, shortened to what failed and where (its own text embeds the
    whole payload)."""
    cause = exc.__cause__
    details = getattr(cause, "schema_errors", None) or getattr(exc, "schema_errors", None)
    if details:
        found = "; ".join(
            f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message[:200]}"
            for e in details
        )
        return f"{type(exc).__name__}: {found}"
    return f"{type(exc).__name__}: {str(cause or exc)[:300]}"


@dataclass
class Canned:
    """One answer the adapter gives, in order."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: bytes | None = None
    off_spec: str | None = None
    """Why this status may be absent from the operation's responses (None: it must be there)."""


@dataclass
class Sent:
    method: str
    url: str
    headers: dict[str, str]
    json: Any


class ContractAdapter(BaseAdapter):
    """Answers from `answers` (an exception is raised instead, as a dropped connection
    would be); validates API traffic against the description as it goes."""

    def __init__(self, answers: list[Canned | BaseException], *, api_root: str) -> None:
        super().__init__()
        self.answers = list(answers)
        self.sent: list[Sent] = []
        self.api_root = api_root

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        body = request.body
        payload = json.loads(body) if body else None
        self.sent.append(
            Sent(request.method or "", request.url or "", dict(request.headers), payload)
        )
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        response = build_response(
            request, answer.status, answer.body, answer.headers, answer.raw_body
        )
        if (request.url or "").startswith(self.api_root):
            try:
                note = validate_exchange(request, response)
            except OpenAPIError as exc:
                raise AssertionError(f"contract violation: {describe(exc)}") from None
            if note and answer.off_spec is None:
                raise AssertionError(f"{note}: mark the canned answer off_spec=<why>")
        return response

    def close(self) -> None:
        pass


def session_with(adapter: BaseAdapter) -> requests.Session:
    """A Session whose every http(s) request goes to `adapter` (nothing reaches a network)."""
    session = requests.Session()
    session.trust_env = False
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session
