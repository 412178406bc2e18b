"""The measuring child's environment: an allow-list, never the runner's `os.environ`.

The child imports pull-request code. The runner's environment holds its secrets (tokens,
cloud keys, the SSH agent) and the files through which a step could reach later workflow
steps (`GITHUB_ENV`, `GITHUB_OUTPUT`, `GITHUB_PATH`). So the child gets only:

1. PASSED_NAMES (and `LC_*`): what the interpreter, torch, CUDA, the compilers that Inductor
   and Triton call, and the locale need, as the host has them;
2. the names a step opts in (`env: [HF_HOME]` in compilegate.yml) — never a name that looks
   like a secret or a CI runner's own variable, nor one compilegate sets itself
   (`opt_in_refusal` says why; the config loader turns that into a config error);
3. what compilegate sets itself (`harness_variables`): a fresh HOME, the Inductor and Triton
   cache folders, unbuffered output;
4. the runner's job tracking id (`RUNNER_TRACKING_ID`, TRACKING_NAMES), although the RUNNER_*
   family is the runner's: it is no credential, and the runner's end-of-job cleanup kills
   the processes that carry it — without it a child's leftover (a `setsid` grandchild)
   outlives the job. Only that name, and only a value of an id's shape.

Variables that change what is measured (`TORCHINDUCTOR_*`, `TORCHDYNAMO_DISABLE`,
`OMP_NUM_THREADS`, `PYTORCH_CUDA_ALLOC_CONF`, `CUDA_LAUNCH_BLOCKING`, ...) are never passed
silently: they are stripped unless a step opts in, and the values the host had are recorded
in the result's `environment.measurement_env` (`measurement_variables`).

Pure functions over mappings, standard library only: the container backend builds the
environment of `docker run` with the same `child_environment`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

# What the measuring interpreter needs from the host, each for a reason:
PASSED_NAMES = frozenset(
    {
        "PATH",  # the C++ compiler (Inductor), cc (Triton's launcher), ldconfig, nvidia-smi
        "LANG",  # locale: how compilers' and subprocesses' output is decoded
        "LANGUAGE",
        "TZ",
        "TMPDIR",  # where Inductor and Triton build; a small or noexec /tmp is why it is set
        "USER",  # getpass.getuser(): Inductor and Triton name default folders after it
        "LOGNAME",
        "LD_LIBRARY_PATH",  # where the CUDA driver, CUDA and cuDNN libraries are found
        "CUDA_VISIBLE_DEVICES",  # which GPU a runner gave this job
        "CUDA_DEVICE_ORDER",
        "CUDA_HOME",  # the CUDA toolkit, for C++/CUDA builds
        "CUDA_PATH",
        "NVIDIA_VISIBLE_DEVICES",  # the NVIDIA container runtime's view of the same
        "NVIDIA_DRIVER_CAPABILITIES",
        "HIP_VISIBLE_DEVICES",  # ROCm's equivalents
        "ROCR_VISIBLE_DEVICES",
        "CC",  # the compilers Triton (CC) and Inductor's C++ backend (CXX) call
        "CXX",
        "CPATH",  # their header and library search paths
        "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH",
        "LIBRARY_PATH",
        "CONDA_PREFIX",  # Inductor's C++ builder looks for OpenMP and headers there
        "SYSTEMROOT",  # Windows: the interpreter cannot start without it
    }
)
PASSED_PREFIXES = ("LC_",)

# Set by compilegate itself (harness_variables, child/main.py): a host value is ignored and
# a step may not opt in. TORCH_LOGS/TORCH_TRACE would override the diagnostics' own logging.
CONTROLLED_NAMES = frozenset(
    {"HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_LOGS", "TORCH_TRACE"}
)
# PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, ...: they decide what the harness itself imports.
CONTROLLED_PREFIXES = ("PYTHON",)

# Variables that change what or how the child measures: stripped unless a step opts in,
# recorded as the host had them.
MEASUREMENT_NAMES = frozenset(
    {"LD_PRELOAD", "GLIBC_TUNABLES", "NVIDIA_TF32_OVERRIDE", "TOKENIZERS_PARALLELISM"}
)
MEASUREMENT_PREFIXES = (
    "TORCH",  # TORCH_*, TORCHINDUCTOR_*, TORCHDYNAMO_*, TORCH_COMPILE_DISABLE, ...
    "PYTORCH_",  # PYTORCH_CUDA_ALLOC_CONF, PYTORCH_NO_CUDA_MEMORY_CACHING, ...
    "TRITON_",  # TRITON_INTERPRET runs kernels in an interpreter
    "CUDA_",  # CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING, CUDA_CACHE_* (not the passed ones)
    "CUBLAS_",
    "CUBLASLT_",
    "CUDNN_",
    "NCCL_",
    "OMP_",  # OMP_NUM_THREADS: the CPU step's thread count
    "KMP_",
    "GOMP_",
    "MKL_",
    "OPENBLAS_",
    "DNNL_",
    "ONEDNN_",
    "ATEN_",
    "MALLOC_",  # glibc allocator tunables
)

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

# actions/runner sets RUNNER_TRACKING_ID (`github_<guid>`) on each step's process and, when
# the job ends, kills every process whose environment holds the same value (JobExtension's
# process cleanup); `0` is the documented way to opt a process out. Passed as the host has it.
TRACKING_NAMES = frozenset({"RUNNER_TRACKING_ID"})
_TRACKING_VALUE = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")

# A value can carry a credential under an innocent name (PIP_INDEX_URL, DATABASE_URL,
# SLACK_WEBHOOK_URL): a URL with user:password@, a URL with a secret-looking query parameter,
# a webhook's URL (whoever holds it may post), a token of a well-known shape, a JWT, a PEM
# block, an Authorization header's value, or a connection string's key.
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]+@")
_URL_SECRET_QUERY = re.compile(
    r"://\S*[?&][A-Za-z_.-]*(token|key|secret|password|passwd|sig|signature|auth|credential)s?=",
    re.IGNORECASE,
)
_URL_WEBHOOK = re.compile(r"://\S*/(hooks?|webhooks?)(/|$)", re.IGNORECASE)
_TOKEN_SHAPES = re.compile(
    r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}"
    r"|ASIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|gl(pat|cbt|dt|rt|ptt)-[\w-]{20,}"
    r"|npm_[A-Za-z0-9]{36}|pypi-AgE[\w-]{40,}|AIza[\w-]{35}|ya29\.[\w-]{20,}"
    r"|dckr_pat_[\w-]{20,}|[sr]k_live_[A-Za-z0-9]{20,})"
)
# A JWT (a CI job's OIDC token, a cloud session): base64url of `{"...` twice, then a signature
# (empty for alg none).
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_PEM_BLOCK = re.compile(r"-----BEGIN [A-Z0-9 ]+-----")
_AUTH_HEADER = re.compile(r"^\s*(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_CONNECTION_STRING_SECRET = re.compile(
    r"(^|;)\s*(AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)\s*=", re.IGNORECASE
)


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


def secret_value_reason(value: str) -> str | None:
    """Why a variable's value looks like it carries a credential, or None. The value itself
    is never quoted back."""
    for shape, reason in _SECRET_VALUE_SHAPES:
        if shape.search(value):
            return reason
    return None


# The shapes of a credential-carrying value, each with what the refusal says, in the order
# they are tried.
_SECRET_VALUE_SHAPES = (
    (_URL_USERINFO, "its value is a URL with credentials in it (user:password@host)"),
    (_URL_SECRET_QUERY, "its value is a URL with a secret-looking query parameter"),
    (_URL_WEBHOOK, "its value is a webhook URL (whoever holds it may post)"),
    (_TOKEN_SHAPES, "its value looks like an access token"),
    (_JWT, "its value looks like a JWT (a signed identity token)"),
    (_PEM_BLOCK, "its value is a PEM block (a key or certificate)"),
    (_AUTH_HEADER, "its value is an Authorization header's credential"),
    (_CONNECTION_STRING_SECRET, "its value is a connection string with a key or password in it"),
)


def refuse_credential_values(host_env: Mapping[str, str], step_opt_in: Sequence[str]) -> None:
    """ValueError naming the first opted-in variable whose host value looks like a credential:
    a step may opt in a name, never a secret under it."""
    for name in sorted(set(step_opt_in)):
        reason = secret_value_reason(host_env.get(name, ""))
        if reason is not None:
            raise ValueError(f"{name} is never passed to the measuring child: {reason}")


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


def is_passed(name: str) -> bool:
    """True for the allow-list every child gets."""
    return name in PASSED_NAMES or name.startswith(PASSED_PREFIXES)


def changes_measurement(name: str) -> bool:
    """True for a variable that changes what or how the child measures."""
    upper = name.upper()
    if upper in MEASUREMENT_NAMES:
        return True
    return upper.startswith(MEASUREMENT_PREFIXES) and not is_passed(name)


def child_environment(
    host_env: Mapping[str, str], step_opt_in: Sequence[str] = ()
) -> dict[str, str]:
    """The host variables the measuring child may see: the allow-list plus the step's opt-in.

    Never a secret-looking name (whatever the opt-in says), never one compilegate sets
    itself (add `harness_variables` for those). An opted-in name the host lacks stays unset.
    The runner's RUNNER_TRACKING_ID passes too (is_tracking), so its cleanup finds the child.
    """
    refused = [message for message in map(opt_in_refusal, step_opt_in) if message]
    if refused:
        raise ValueError(refused[0])
    refuse_credential_values(host_env, step_opt_in)
    opted = set(step_opt_in)
    return {
        name: value
        for name, value in host_env.items()
        if (
            secret_reason(name) is None
            and controlled_reason(name) is None
            and (is_passed(name) or name in opted)
        )
        or is_tracking(name, value)
    }


def is_tracking(name: str, value: str) -> bool:
    """True for the runner's job tracking id with a value of an id's shape (nothing else)."""
    return (
        name in TRACKING_NAMES
        and _TRACKING_VALUE.match(value) is not None
        and secret_value_reason(value) is None
    )


# Host paths and tools: meaningful on the host only. A container has its own (its image's ENV).
HOST_ONLY_NAMES = frozenset(
    {
        "PATH",
        "TMPDIR",
        "USER",
        "LOGNAME",
        "LD_LIBRARY_PATH",
        "CUDA_HOME",
        "CUDA_PATH",
        "CC",
        "CXX",
        "CPATH",
        "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH",
        "LIBRARY_PATH",
        "CONDA_PREFIX",
        "SYSTEMROOT",
        "RUNNER_TRACKING_ID",  # the host runner's cleanup; a container is removed by us
    }
)


def container_environment(
    host_env: Mapping[str, str], step_opt_in: Sequence[str] = ()
) -> dict[str, str]:
    """What a measuring container gets from the host: the child's allow-list and opt-in
    (locale, GPU selection, what the steps asked for) without the host's own paths."""
    allowed = child_environment(host_env, step_opt_in)
    return {name: value for name, value in allowed.items() if name not in HOST_ONLY_NAMES}


def measurement_variables(host_env: Mapping[str, str]) -> dict[str, str]:
    """The host's variables that would change a measurement, name → value, sorted: what the
    result records (each is stripped from the child unless a step opts in)."""
    return {
        name: host_env[name]
        for name in sorted(host_env)
        if changes_measurement(name) and secret_reason(name) is None
    }


def harness_variables(
    home: Path, inductor_cache_dir: Path, host_env: Mapping[str, str]
) -> dict[str, str]:
    """What compilegate sets in every child: a fresh HOME (caches and tools' dot-files, never
    the runner's ~/.aws, ~/.netrc, ~/.cache/huggingface/token), its own compile caches, and
    unbuffered output. The host's user site-packages (`pip install --user torch`) stays
    importable although HOME moved."""
    env = {
        "HOME": str(home),
        "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache_dir),
        "TRITON_CACHE_DIR": str(Path(inductor_cache_dir) / "triton"),
        "PYTHONUNBUFFERED": "1",
    }
    user_base = host_env.get("PYTHONUSERBASE") or (
        str(Path(host_env["HOME"]) / ".local") if host_env.get("HOME") else None
    )
    if user_base:
        env["PYTHONUSERBASE"] = user_base
    return env
