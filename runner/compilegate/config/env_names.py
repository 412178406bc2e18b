"""Which host variable names a step may opt in (`env: [NAME]` in compilegate.yml): never one
that looks like a secret or a CI runner's own variable, nor one compilegate sets itself.

A rule about names only, so the config loader refuses a bad `env` entry with its key path and
line, and the run side (run/child_env.py, run/env_policy.py) applies the same rule when it
builds the measuring child's environment. What a variable's *value* may carry is the run
side's concern (run/child_env.py, `secret_value_reason`). Only the standard library.
"""

from __future__ import annotations

import re

# Set by compilegate itself (harness_variables, child/main.py): a host value is ignored and
# a step may not opt in. TORCH_LOGS/TORCH_TRACE would override the diagnostics' own logging.
CONTROLLED_NAMES = frozenset(
    {
        "HOME",
        "TORCHINDUCTOR_CACHE_DIR",
        "TRITON_CACHE_DIR",
        "TORCH_LOGS",
        "TORCH_TRACE",
        "COMPILEGATE_CONTROL_FD",  # the child's line to its parent (child/control.py)
    }
)
# PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, ...: they decide what the harness itself imports.
CONTROLLED_PREFIXES = ("PYTHON",)

# Names a step may never opt in: secrets by their usual spelling, and the CI runner's and
# cloud tools' own families (GITHUB_ENV/GITHUB_OUTPUT/GITHUB_PATH would let a step change
# later workflow steps; DOCKER_HOST is the Docker daemon).
SECRET_WORDS = frozenset(
    {
        "TOKEN",
        "TOKENS",
        "KEY",
        "KEYS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PWD",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "AUTH",
        "APIKEY",
        "PAT",
        "COOKIE",
        "COOKIES",
        "DSN",
        "JWT",  # CI_JOB_JWT, OIDC_JWT: a CI job's signed identity, good for cloud logins
        "JWTS",
        "OIDC",
        "BEARER",
        "PEM",  # DEPLOY_KEY_PEM: a key (or the file holding one)
        "PASSPHRASE",
        "PRIVATE",
        "SAS",  # Azure's shared access signatures
        "SESSION",  # SESSION_ID: a logged-in session is a credential
    }
)
# ... also glued to another word (GHTOKEN, APIKEY), and these anywhere in a name:
SECRET_ENDINGS = (
    "TOKEN", "TOKENS", "KEY", "KEYS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "JWT", "PEM",
    "BEARER", "PASSPHRASE",
)  # fmt: skip
SECRET_FRAGMENTS = (
    "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "WEBHOOK", "JWT", "BEARER", "PASSPHRASE",
    "PGPASS",  # PGPASS, PGPASSFILE: libpq's password file
    "PRIVATE_KEY", "PRIVATEKEY", "CONNECTION_STRING", "CONNSTR",
)  # fmt: skip
RUNNER_PREFIXES = (
    "GITHUB_",
    "GH_",
    "ACTIONS_",
    "RUNNER_",
    "INPUT_",  # a GitHub Action's inputs (INPUT_GITHUB_TOKEN)
    "AWS_",
    "AZURE_",
    "GCP_",
    "GCLOUD_",
    "GOOGLE_",
    "CLOUDSDK_",
    "SSH_",
    "GPG_",
    "GNUPG",
    "GIT_",  # GIT_ASKPASS, GIT_CONFIG_*: credential helpers
    "DOCKER_",
    "KUBE",
    "VAULT_",
    "NETRC",
    # other CI systems' own variables (GitLab's CI_JOB_JWT and CI_JOB_TOKEN among them)
    "CI_",
    "BUILDKITE_",
    "CIRCLE_",
    "TRAVIS_",
    "JENKINS_",
    "BITBUCKET_",
    "DRONE_",
    "TEAMCITY_",
)

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def secret_reason(name: str) -> str | None:
    """Why `name` looks like a secret or the runner's own variable, or None."""
    upper = name.upper()
    prefix = next((p for p in RUNNER_PREFIXES if upper.startswith(p)), None)
    if prefix is not None:
        return f"the {prefix.rstrip('_')}_* family belongs to the CI runner or a cloud tool"
    for word in upper.split("_"):
        if word in SECRET_WORDS or word.endswith(SECRET_ENDINGS):
            return f"a name with {word} in it looks like a secret"
    fragment = next((f for f in SECRET_FRAGMENTS if f in upper), None)
    if fragment is not None:
        return f"a name containing {fragment} looks like a secret"
    return None


def controlled_reason(name: str) -> str | None:
    """Why compilegate sets `name` itself (the host's value is ignored), or None."""
    upper = name.upper()
    if upper in CONTROLLED_NAMES:
        return "compilegate sets it for the child itself"
    if upper.startswith(CONTROLLED_PREFIXES):
        return (
            "compilegate controls the child's interpreter; the repository (and src/) "
            "is importable without PYTHONPATH"
        )
    return None


def opt_in_refusal(name: str) -> str | None:
    """Why a step may not opt in `name` (one line), or None when it may."""
    if not _VALID_NAME.match(name):
        return f"{name!r} is not an environment variable name"
    reason = secret_reason(name) or controlled_reason(name)
    if reason is not None:
        return f"{name} is never passed to the measuring child: {reason}"
    return None
