"""The vendored description is the one PROVENANCE.md names, and holds what the client calls."""

from __future__ import annotations

import hashlib

import pytest
from github_contract import SPEC_PATH, SPEC_SHA256, spec_dict
from openapi_spec_validator import validate

# Every operation compilegate.github calls, as (method, path template, operationId).
CLIENT_OPERATIONS = [
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues/list-comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues/create-comment"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/update-comment"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}", "pulls/get"),
    ("get", "/rate_limit", "rate-limit/get"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts", "actions/list-artifacts-for-repo"),
    (
        "get",
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
        "actions/download-artifact",
    ),
]


def test_the_vendored_file_is_the_one_provenance_names() -> None:
    digest = hashlib.sha256(SPEC_PATH.read_bytes()).hexdigest()
    assert digest == SPEC_SHA256
    assert SPEC_SHA256 in SPEC_PATH.with_name("PROVENANCE.md").read_text()


def test_the_vendored_file_is_a_valid_openapi_document() -> None:
    validate(spec_dict())


@pytest.mark.parametrize(("method", "path", "operation_id"), CLIENT_OPERATIONS)
def test_every_operation_the_client_calls_is_in_the_contract(
    method: str, path: str, operation_id: str
) -> None:
    operation = spec_dict()["paths"][path][method]
    assert operation["operationId"] == operation_id
    assert operation_id in spec_dict()["x-source"]["operations"]
