"""The measuring child's environment is an allow-list (run/child_env.py): the runner's secrets
and workflow files never reach user code, whatever the step opts in; what changes a
measurement is stripped and recorded, never passed silently."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from compilegate.child.protocol import CONTROL_VAR
from compilegate.config.env_names import opt_in_refusal
from compilegate.run.child_env import (
    child_environment,
    harness_variables,
    measurement_variables,
)

# What a GitHub-hosted or self-hosted runner typically holds, plus the ordinary variables.
RUNNER_SECRETS = {
    "GITHUB_TOKEN": "ghs_x",
    "GH_TOKEN": "ghs_y",
    "INPUT_GITHUB_TOKEN": "ghs_z",
    "ACTIONS_RUNTIME_TOKEN": "rt",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "id-token-request-url",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "idt",
    "AWS_ACCESS_KEY_ID": "AKIA",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "AWS_SESSION_TOKEN": "aws-session",
    "HF_TOKEN": "hf_x",
    "HUGGING_FACE_HUB_TOKEN": "hf_y",
    "WANDB_API_KEY": "wandb",
    "OPENAI_API_KEY": "sk",
    "MY_API_TOKEN": "mine",
    "GHTOKEN": "glued",
    "DB_PASSWORD": "pw",
    "SIGNING_SECRET_FILE": "/s",
    "GOOGLE_APPLICATION_CREDENTIALS": "/creds.json",
    "AZURE_CLIENT_SECRET": "az",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "GITHUB_ENV": "/runner/_temp/set_env",
    "GITHUB_OUTPUT": "/runner/_temp/set_output",
    "GITHUB_PATH": "/runner/_temp/add_path",
    "GITHUB_STEP_SUMMARY": "/runner/_temp/summary",
    "DOCKER_HOST": "unix:///var/run/docker.sock",
    "GIT_ASKPASS": "/askpass",
    "NETRC": "/home/runner/.netrc",
}
ORDINARY = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/scratch/tmp",
    "USER": "runner",
    "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64",
    "CUDA_VISIBLE_DEVICES": "1",
    "NVIDIA_VISIBLE_DEVICES": "1",
    "CXX": "g++-12",
    "HOME": "/home/runner",
    "HF_HOME": "/data/hf",
    "EDITOR": "vim",
    "RUNNER_TEMP": "/runner/_temp",
    "PYTHONPATH": "/home/runner/work/repo",
}
MEASUREMENT = {
    "TORCH_COMPILE_DISABLE": "1",
    "TORCHDYNAMO_DISABLE": "1",
    "TORCHINDUCTOR_MAX_AUTOTUNE": "1",
    "TORCHINDUCTOR_CACHE_DIR": "/home/runner/.cache/inductor",
    "TORCH_LOGS": "+dynamo",
    "CUDA_LAUNCH_BLOCKING": "1",
    "OMP_NUM_THREADS": "1",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "TRITON_INTERPRET": "1",
    "LD_PRELOAD": "/usr/lib/libtcmalloc.so",
}
HOST = {**RUNNER_SECRETS, **ORDINARY, **MEASUREMENT}


def test_no_secret_or_workflow_file_reaches_the_child():
    env = child_environment(HOST)
    assert not set(RUNNER_SECRETS) & set(env)


def test_the_allow_list_passes_what_torch_cuda_compilers_and_locale_need():
    env = child_environment(HOST)
    for name in ("PATH", "LANG", "LC_ALL", "TMPDIR", "USER", "LD_LIBRARY_PATH", "CXX"):
        assert env[name] == HOST[name]
    assert env["CUDA_VISIBLE_DEVICES"] == "1" and env["NVIDIA_VISIBLE_DEVICES"] == "1"


def test_everything_else_is_dropped_unless_the_step_opts_in():
    env = child_environment(HOST)
    for name in ("HF_HOME", "EDITOR", "RUNNER_TEMP", "HOME", "PYTHONPATH"):
        assert name not in env
    assert child_environment(HOST, ["HF_HOME"])["HF_HOME"] == "/data/hf"
    assert "HF_HOME" not in child_environment({"PATH": "/bin"}, ["HF_HOME"]), "unset stays unset"


def test_variables_that_change_the_measurement_are_stripped_and_recorded():
    env = child_environment(HOST)
    assert not set(MEASUREMENT) & set(env)
    recorded = measurement_variables(HOST)
    assert recorded == MEASUREMENT
    assert list(recorded) == sorted(recorded)
    assert not set(RUNNER_SECRETS) & set(recorded), "a secret's value is never recorded"
    assert "CUDA_VISIBLE_DEVICES" not in recorded and "PATH" not in recorded


def test_a_measurement_variable_is_passed_only_when_opted_in():
    env = child_environment(HOST, ["PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS"])
    assert env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert env["OMP_NUM_THREADS"] == "1"
    assert "TORCHDYNAMO_DISABLE" not in env


@pytest.mark.parametrize(
    "name",
    [*RUNNER_SECRETS, "my_token", "Stripe_Key", "NPM_AUTH", "DEPLOY_PAT", "SESSION_COOKIE"],
)
def test_opting_in_a_secret_looking_name_is_refused_and_never_passes(name: str):
    refusal = opt_in_refusal(name)
    assert refusal is not None and "\n" not in refusal
    assert refusal.startswith(f"{name} is never passed to the measuring child: ")
    with pytest.raises(ValueError):
        child_environment({name: "x"}, [name])


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("HOME", "compilegate sets it"),
        ("TORCHINDUCTOR_CACHE_DIR", "compilegate sets it"),
        ("TORCH_LOGS", "compilegate sets it"),
        (CONTROL_VAR, "compilegate sets it"),  # the child's line to the launcher
        ("PYTHONPATH", "without PYTHONPATH"),
        ("PYTHONHOME", "controls the child's interpreter"),
        ("no-dash", "not an environment variable name"),
    ],
)
def test_names_compilegate_controls_cannot_be_opted_in(name: str, fragment: str):
    refusal = opt_in_refusal(name)
    assert refusal is not None and fragment in refusal


@pytest.mark.parametrize(
    "name",
    ["HF_HOME", "TORCH_HOME", "TOKENIZERS_PARALLELISM", "DATA_DIR", "OMP_NUM_THREADS", "KEYWORD"],
)
def test_ordinary_names_can_be_opted_in(name: str):
    assert opt_in_refusal(name) is None


def test_the_functions_are_pure_over_any_mapping():
    host = types.MappingProxyType(dict(HOST))
    before = dict(host)
    assert child_environment(host, ["HF_HOME"]) == child_environment(dict(host), ["HF_HOME"])
    measurement_variables(host)
    assert dict(host) == before


def test_the_harness_sets_a_fresh_home_and_its_own_caches(tmp_path: Path):
    env = harness_variables(tmp_path / "home", tmp_path / "cache", HOST)
    assert env["HOME"] == str(tmp_path / "home")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "cache")
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "cache" / "triton")
    # `pip install --user torch` stays importable although HOME moved.
    assert env["PYTHONUSERBASE"] == "/home/runner/.local"
    assert "PYTHONUSERBASE" not in harness_variables(tmp_path, tmp_path, {})


# What an attacker would opt in next: CI systems' job tokens and OIDC JWTs, Postgres's
# password variables, PEM keys, bearer tokens, passphrases, connection strings.
ATTACKER_NAMES = [
    "CI_JOB_JWT", "CI_JOB_JWT_V2", "CI_JOB_TOKEN", "CI_REGISTRY_PASSWORD", "OIDC_JWT",
    "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ID_TOKEN", "MY_JWT",
    "SIGSTORE_ID_TOKEN", "VAULTJWT", "PGPASS", "PGPASSWORD", "PGPASSFILE", "MYSQL_PWD",
    "DEPLOY_KEY_PEM", "TLS_PEM", "SERVICE_PEM_FILE", "BEARER", "AUTH_BEARER", "API_BEARER_VALUE",
    "SSH_PASSPHRASE", "GPG_PASSPHRASE", "KEY_PASSPHRASE", "PRIVATE_KEY", "SIGNING_PRIVATE",
    "STORAGE_CONNECTION_STRING", "AZURE_STORAGE_SAS", "BUILDKITE_AGENT_ACCESS_TOKEN",
    "CIRCLE_OIDC_TOKEN", "TWINE_PASSWORD", "NPM_CONFIG__AUTH", "KUBECONFIG", "ARM_CLIENT_SECRET",
    "SESSION_ID", "NETRC",
]  # fmt: skip


@pytest.mark.parametrize("name", ATTACKER_NAMES)
def test_credential_names_an_attacker_would_opt_in_are_refused(name: str):
    refusal = opt_in_refusal(name)
    assert refusal is not None and refusal.startswith(f"{name} is never passed"), refusal
    assert name not in child_environment({name: "x", "PATH": "/bin"})


TRACKING_ID = "github_7f0e4c52-1d2b-4b8e-9d3a-5c6f7a8b9c0d"


def test_the_runners_tracking_id_passes_so_its_cleanup_finds_the_children():
    """Issue 29 item 7: without RUNNER_TRACKING_ID a child's `setsid` grandchild outlived the
    job; with it, the runner's end-of-job cleanup kills it. Only that one RUNNER_* name."""
    env = child_environment({**HOST, "RUNNER_TRACKING_ID": TRACKING_ID})
    assert env["RUNNER_TRACKING_ID"] == TRACKING_ID
    assert [name for name in env if name.startswith(("RUNNER_", "GITHUB_", "ACTIONS_"))] == [
        "RUNNER_TRACKING_ID"
    ]
    assert not set(RUNNER_SECRETS) & set(env)
    assert child_environment({"RUNNER_TRACKING_ID": "0"}) == {"RUNNER_TRACKING_ID": "0"}


@pytest.mark.parametrize(
    "value",
    ["ghp_" + "a" * 36, "https://user:pw@host/x", "id with spaces", "x" * 101, "", "a\nb"],
)
def test_a_tracking_id_that_is_not_an_id_is_not_passed(value: str):
    assert "RUNNER_TRACKING_ID" not in child_environment({"RUNNER_TRACKING_ID": value})


def test_a_container_does_not_get_the_hosts_tracking_id():
    from compilegate.run.child_env import container_environment

    assert "RUNNER_TRACKING_ID" not in container_environment({"RUNNER_TRACKING_ID": TRACKING_ID})
