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


def test_run_refuses_before_measuring_with_one_line_and_exit_2(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "compilegate.yml"
    config.write_text(
        "version: 1\nsteps:\n  - name: s\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        "    env: [PIP_INDEX_URL]\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root / "runner"),
           "PIP_INDEX_URL": CREDENTIALS["PIP_INDEX_URL"]}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", "run", "--config", str(config), "--repo", str(root),
         "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "PIP_INDEX_URL is never passed" in done.stderr
    assert "s3cret" not in done.stderr and not (tmp_path / "r.json").exists()


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


@pytest.mark.parametrize(
    ("opted", "host", "named"),
    [
        ("CI_JOB_JWT", {"CI_JOB_JWT": JWT}, "CI_JOB_JWT is never passed"),
        ("SERVICE_PEM", {"SERVICE_PEM": "/etc/svc.pem"}, "SERVICE_PEM is never passed"),
        ("BUILD_INFO", {"BUILD_INFO": JWT}, "BUILD_INFO is never passed"),
    ],
)
def test_a_pull_requests_config_opting_in_a_credential_is_refused_with_exit_2(
    tmp_path, opted, host, named
):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "compilegate.yml"
    config.write_text(
        "version: 1\nsteps:\n  - name: s\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        f"    env: [{opted}]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", "run", "--config", str(config), "--repo", str(root),
         "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "PYTHONPATH": str(root / "runner"), **host},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and named in done.stderr, done.stderr
    assert JWT not in done.stderr and not (tmp_path / "r.json").exists()
