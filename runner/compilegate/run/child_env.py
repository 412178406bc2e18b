"""The measuring child's environment: an allow-list, never the runner's `os.environ`.

The child imports pull-request code. The runner's environment holds its secrets (tokens,
cloud keys, the SSH agent) and the files through which a step could reach later workflow
steps (`GITHUB_ENV`, `GITHUB_OUTPUT`, `GITHUB_PATH`). So the child gets only:

1. PASSED_NAMES (and `LC_*`): what the interpreter, torch, CUDA, the compilers that Inductor
   and Triton call, and the locale need, as the host has them;
2. the names a step opts in (`env: [HF_HOME]` in compilegate.yml) — never a name that looks
   like a secret or a CI runner's own variable, nor one compilegate sets itself
   (config/env_names.py, `opt_in_refusal`, says why; the config loader turns that into a
   config error);
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

from ..config.env_names import controlled_reason, opt_in_refusal, secret_reason

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
