"""A step may opt a variable in by name, never a credential under an innocent name."""

from __future__ import annotations

import pytest

from compilegate.config.env_names import opt_in_refusal
from compilegate.run.child_env import (
    child_environment,
    refuse_credential_values,
    secret_value_reason,
)

CREDENTIALS = {
    "PIP_INDEX_URL": "https://user:s3cret@pypi.internal.example/simple",
    "DATABASE_URL": "postgres://app:hunter2@db.internal:5432/prod",
    "MODEL_STORE_URL": "https://store.internal/models?sig=abc123&expires=1",
    "NOTIFY_URL": "https://chat.example/services/hooks/T000/B000/xyz",
    "HUB_MIRROR": "hf_" + "a" * 34,
    "ORG_SETTING": "ghp_" + "b" * 36,
    "PROXY_URL": "http://proxyuser@proxy.internal:3128",
}


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
def test_a_credential_looking_value_is_refused_naming_the_variable_not_the_value(name):
    with pytest.raises(ValueError) as caught:
        refuse_credential_values(CREDENTIALS, [name])
    message = str(caught.value)
    assert message.startswith(f"{name} is never passed") and CREDENTIALS[name] not in message
    with pytest.raises(ValueError):
        child_environment(CREDENTIALS, [name])


@pytest.mark.parametrize("name", ["SLACK_WEBHOOK_URL", "SENTRY_DSN", "MY_WEBHOOK"])
def test_webhook_and_dsn_names_are_refused(name):
    assert opt_in_refusal(name) is not None


@pytest.mark.parametrize(
    "value",
    [
        "https://pypi.internal.example/simple",
        "file:///opt/wheels",
        "max_split_size_mb:128",
        "0,1",
        "s3://bucket/models/run-42",
        "https://example.org/a?page=2",
    ],
)
def test_ordinary_values_pass(value):
    assert secret_value_reason(value) is None
    assert child_environment({"MY_SETTING": value}, ["MY_SETTING"]) == {"MY_SETTING": value}


# JWTs (a CI job's OIDC token, a cloud session), PEM blocks, Authorization header values,
# and tokens of other well-known shapes, each under a name nobody would refuse.
JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJyZXBvOm9jdG8vdHJhaW5lciJ9.c2lnbmF0dXJl"
SHAPED = {
    "BUILD_INFO": JWT,
    "UNSIGNED_INFO": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
    "SERVICE_CERTIFICATE": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "DEPLOY_IDENTITY": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n",
    "UPSTREAM_HEADER": "Bearer abcdef0123456789abcdef",
    "UPSTREAM_BASIC": "Basic dXNlcjpodW50ZXIy",
    "REGISTRY_CONFIG": "npm_" + "c" * 36,
    "PACKAGE_UPLOAD": "pypi-AgEIcHlwaS5vcmc" + "d" * 40,
    "MAPS_CONFIG": "AIza" + "e" * 35,
    "TEMP_CLOUD": "ASIA" + "F" * 16,
    "GOOGLE_ACCESS": "ya29." + "g" * 40,
    "STORE_CONN": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc123==;",
    "DOCKER_LOGIN_VALUE": "dckr_pat_" + "h" * 27,
    "GITLAB_RUNNER_VALUE": "glcbt-" + "i" * 24,
    "PAYMENTS": "sk_live_" + "j" * 24,
}


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_credential_shaped_values_are_refused(name):
    assert secret_value_reason(SHAPED[name]) is not None
    with pytest.raises(ValueError) as caught:
        child_environment(SHAPED, [name])
    assert SHAPED[name] not in str(caught.value)


@pytest.mark.parametrize(
    "value",
    ["eyJ-not-a-token", "a.b.c", "1.2.3", "https://example.org/docs/jwt.html", "Basic", "/pem/dir"],
)
def test_values_that_only_resemble_a_credential_pass(value):
    assert secret_value_reason(value) is None
