"""examples/pool/: ARC runner-scale-set values and container-hook templates, checked offline.

Every values key against the keys ARC's chart reads (CHART_VALUES_KEYS, a copy made from the
chart of CHART_VERSION), every pod spec with kubernetes-validate (strict: an unknown field is
an error), and what compilegate needs of them: the job pod (or the Docker engine) holds the
GPUs, the runner pod none; a /dev/shm large enough for NCCL; the scale set named as
`compilegate plan` labels its legs. The same check refuses a template with a wrong key or a
missing GPU limit (the planted cases below). Nothing here ever ran on a real cluster.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from compilegate.config.pool_plan import scale_set_of
from repo_helpers import REPO_ROOT

POOL = REPO_ROOT / "examples" / "pool"
# actions/actions-runner-controller, charts/gha-runner-scale-set at the tag
# gha-runner-scale-set-0.14.2 (commit 9bb16ae49d0ce585d8e682aa7e2668a6e832d5d8).
CHART_VERSION = "gha-runner-scale-set 0.14.2"
# Every key of that chart's values: those values.yaml sets or shows commented out, and those
# its templates read (`.Values.…` in templates/*.yaml and _helpers.tpl). None: a value the
# chart passes on as it is; a dict: the keys it reads under it. `template` (the runner's
# PodTemplateSpec) is checked by kubernetes-validate instead.
CHART_VALUES_KEYS: dict[str, Any] = {
    "githubConfigUrl": None,
    "githubConfigSecret": {  # or the name of a secret (a string)
        "github_token": None,
        "github_app_id": None,
        "github_app_installation_id": None,
        "github_app_private_key": None,
    },
    "scaleSetLabels": None,
    "proxy": {
        "http": {"url": None, "credentialSecretRef": None},
        "https": {"url": None, "credentialSecretRef": None},
        "noProxy": None,
    },
    "maxRunners": None,
    "minRunners": None,
    "runnerGroup": None,
    "runnerScaleSetName": None,
    "githubServerTLS": {"certificateFrom": None, "runnerMountPath": None},
    "keyVault": {
        "type": None,
        "proxy": None,
        "azureKeyVault": {
            "url": None,
            "tenantId": None,
            "clientId": None,
            "certificatePath": None,
            "secretKey": None,
        },
    },
    "containerMode": {
        "type": None,
        "kubernetesModeWorkVolumeClaim": None,  # a PersistentVolumeClaimSpec: validated
        "kubernetesModeAdditionalRoleRules": None,
    },
    "listenerTemplate": None,
    "listenerMetrics": None,
    "template": None,
    "controllerServiceAccount": {"namespace": None, "name": None},
    "namespaceOverride": None,
    "nameOverride": None,
    "annotations": None,
    "labels": None,
    "resourceMeta": None,
}
STRING_OR_MAPPING = {"githubConfigSecret"}
CONTAINER_MODES = ("dind", "kubernetes", "kubernetes-novolume")
# The Kubernetes version the pod specs are validated for (sidecars need 1.29 or later).
KUBERNETES_VERSION = "1.33"
GPU = "nvidia.com/gpu"
# compilegate's Docker shape gives a distributed step's container 1g of /dev/shm.
MIN_SHM_BYTES = 1 << 30
HOOK_TEMPLATE_ENV = "ACTIONS_RUNNER_CONTAINER_HOOK_TEMPLATE"
JOB_CONTAINER = "$job"  # the hook's name for the job container (runner-container-hooks ADR 0134)


def load_pool() -> dict[str, Any]:
    """Every YAML file under examples/pool/, by its path there."""
    return {
        str(path.relative_to(POOL)): yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(POOL.rglob("*.yaml"))
    }


def quantity_bytes(text: Any) -> int:
    match = re.fullmatch(r"([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?", str(text))
    assert match, f"not a quantity: {text!r}"
    scale = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}  # fmt: skip
    return int(match[1]) * scale[match[2]]


def unknown_keys(values: Any, known: dict[str, Any], where: str) -> list[str]:
    problems = []
    for key, value in values.items():
        if key not in known:
            problems.append(f"{where}{key}: not a key of {CHART_VERSION}")
        elif isinstance(known[key], dict):
            if isinstance(value, dict):
                problems += unknown_keys(value, known[key], f"{where}{key}.")
            elif not (key in STRING_OR_MAPPING and isinstance(value, str)):
                problems.append(f"{where}{key}: {CHART_VERSION} reads a mapping here")
    return problems


def kubernetes_problems(kind: str, field: str, body: Any, where: str) -> list[str]:
    """kubernetes-validate's verdict, strict, on `body` as `field` of a `kind` object."""
    document = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "check"}, field: body}
    try:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(map(str, list(exc.absolute_path)[1:]))
        return [f"{where}{path}: {exc.message}"]
    return []


def gpus_of(container: dict[str, Any]) -> int:
    resources = container.get("resources") or {}
    asked = [(resources.get(part) or {}).get(GPU) for part in ("limits", "requests")]
    return max(int(n) for n in asked if n is not None) if any(n is not None for n in asked) else 0


def shm_problems(pod_spec: dict[str, Any], container: dict[str, Any], where: str) -> list[str]:
    """The container's /dev/shm: a memory-backed emptyDir of at least MIN_SHM_BYTES."""
    mounts = container.get("volumeMounts") or []
    mount = next((m for m in mounts if m.get("mountPath") == "/dev/shm"), None)
    if mount is None:
        return [f"{where}: no /dev/shm mount (a container's is 64 MiB, too small for NCCL)"]
    volume = next((v for v in pod_spec.get("volumes") or [] if v.get("name") == mount["name"]), {})
    empty_dir = volume.get("emptyDir") or {}
    size_bytes = quantity_bytes(empty_dir.get("sizeLimit", 0))
    if empty_dir.get("medium") != "Memory" or size_bytes < MIN_SHM_BYTES:
        return [f"{where}: /dev/shm is not a memory-backed emptyDir of at least 1Gi"]
    return []


def placement_problems(pod_spec: dict[str, Any], where: str) -> list[str]:
    tolerated = any(t.get("key") == GPU for t in pod_spec.get("tolerations") or [])
    if not pod_spec.get("nodeSelector") or not tolerated:
        return [f"{where}: no nodeSelector and toleration of the GPU nodes' {GPU} taint"]
    return []


def pool_problems(pool: dict[str, Any]) -> list[str]:
    """Everything wrong with the pool's files, one line each; [] when all is well."""
    problems: list[str] = []
    hooks = {name: body for name, body in pool.items() if name.startswith("kubernetes/job-")}
    for name, body in hooks.items():
        problems += kubernetes_problems("PodTemplate", "template", body, f"{name}: ")
    for name, values in pool.items():
        if "values" not in Path(name).name:
            continue
        problems += unknown_keys(values, CHART_VALUES_KEYS, f"{name}: ")
        mode = values.get("containerMode") or {}
        if mode.get("type") not in (None, *CONTAINER_MODES):
            problems.append(f"{name}: containerMode.type: not one of {', '.join(CONTAINER_MODES)}")
        claim = mode.get("kubernetesModeWorkVolumeClaim")
        if claim is not None:
            where = f"{name}: containerMode.kubernetesModeWorkVolumeClaim."
            problems += kubernetes_problems("PersistentVolumeClaim", "spec", claim, where)
        template = values.get("template") or {}
        problems += kubernetes_problems("PodTemplate", "template", template, f"{name}: template.")
        spec = template.get("spec") or {}
        containers = {c.get("name"): c for c in spec.get("containers") or []}
        runner = containers.get("runner", {})
        if gpus_of(runner):
            problems.append(f"{name}: the runner container asks for {GPU}: it must hold none")
        if name.startswith("kubernetes/"):
            gpus, more = _job_pod_problems(name, mode, runner, spec, hooks)
        else:
            gpus, more = _engine_problems(name, mode, containers, spec)
        problems += more
        if gpus and values.get("runnerScaleSetName") != scale_set_of(gpus):
            problems.append(
                f"{name}: runnerScaleSetName: {scale_set_of(gpus)!r} is compilegate plan's "
                f"label for {gpus} GPU(s)"
            )
    return problems


def _job_pod_problems(
    name: str, mode: dict[str, Any], runner: dict[str, Any], spec: Any, hooks: dict[str, Any]
) -> tuple[int, list[str]]:
    """kubernetes mode: the hook template the runner reads gives `$job` its GPUs."""
    if mode.get("type") != "kubernetes":
        return 0, [f"{name}: containerMode.type: kubernetes expected (jobs in job containers)"]
    problems = placement_problems(spec, f"{name}: template.spec")
    env = {e.get("name"): e.get("value") for e in runner.get("env") or []}
    path = env.get(HOOK_TEMPLATE_ENV, "")
    mounts = {m.get("mountPath"): m.get("name") for m in runner.get("volumeMounts") or []}
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    folder, _, file_name = str(path).rpartition("/")
    hook = hooks.get(f"kubernetes/{file_name}")
    if hook is None or "configMap" not in volumes.get(mounts.get(folder), {}):
        return 0, [f"{name}: {HOOK_TEMPLATE_ENV} names no hook template mounted from a ConfigMap"]
    hook_spec = hook.get("spec") or {}
    job = next((c for c in hook_spec.get("containers") or [] if c.get("name") == JOB_CONTAINER), {})
    gpus = gpus_of(job)
    if not gpus or GPU not in ((job.get("resources") or {}).get("limits") or {}):
        problems.append(f"kubernetes/{file_name}: {JOB_CONTAINER} has no {GPU} limit")
    problems += placement_problems(hook_spec, f"kubernetes/{file_name}: spec")
    problems += shm_problems(hook_spec, job, f"kubernetes/{file_name}: {JOB_CONTAINER}")
    return gpus, problems


def _engine_problems(
    name: str, mode: dict[str, Any], containers: dict[str, Any], spec: Any
) -> tuple[int, list[str]]:
    """The Docker shape: the chart's dind mode cannot give its engine a GPU, so the engine
    is written out, privileged, with the GPU limit; containerMode stays unset."""
    if mode:
        return 0, [f"{name}: containerMode: unset expected (the chart's dind engine has no GPU)"]
    engines = [c for c in containers.values() if (c.get("securityContext") or {}).get("privileged")]
    if len(engines) != 1 or not gpus_of(engines[0]):
        return 0, [f"{name}: no privileged engine container with an {GPU} limit"]
    engine = engines[0]
    problems = placement_problems(spec, f"{name}: template.spec")
    problems += shm_problems(spec, engine, f"{name}: {engine['name']}")
    return gpus_of(engine), problems


SHIPPED = {
    "kubernetes/values-gpu1.yaml",
    "kubernetes/values-gpu2.yaml",
    "kubernetes/job-gpu1.yaml",
    "kubernetes/job-gpu2.yaml",
    "dind/values-gpu1.yaml",
}


def _set(document: dict[str, Any], path: str, value: Any) -> None:
    """Set (or with value None, delete) the key at a dotted path (GPU, dotted itself, is one
    key); a number indexes a list."""
    parts = path.replace(GPU, "\0").split(".")
    *parents, last = [int(p) if p.isdigit() else p.replace("\0", GPU) for p in parts]
    for part in parents:
        document = document[part]
    if value is None:
        del document[last]
    else:
        document[last] = value


K8S = "kubernetes/values-gpu1.yaml"
HOOK = "kubernetes/job-gpu1.yaml"
DIND = "dind/values-gpu1.yaml"
RUNNER = "template.spec.containers.0"
JOB = "spec.containers.0"
# A template broken one way, and what the check says of it.
BROKEN = {
    "as shipped": (None, None, None, None),
    "a misspelt chart key": (K8S, "runnerScaleSetNmae", "x", "runnerScaleSetNmae: not a key of"),
    "a misspelt key under containerMode": (
        K8S, "containerMode.kubernetesModeWorkVolumeClam", {}, "kubernetesModeWorkVolumeClam"
    ),
    "a misspelt key in the runner's pod": (
        K8S, "template.spec.nodeSelectors", {}, "'nodeSelectors' was unexpected"
    ),
    "a misspelt key in the job pod's template": (
        HOOK, f"{JOB}.resource", {}, "'resource' was unexpected"
    ),
    "a misspelt key in the engine's container": (
        DIND, "template.spec.containers.1.securityContexts", {}, "'securityContexts' was unexpected"
    ),
    "no GPU limit on the job container": (
        HOOK, f"{JOB}.resources.limits.{GPU}", None, "$job has no nvidia.com/gpu limit"
    ),
    "a GPU only requested, not limited": (
        HOOK, f"{JOB}.resources", {"requests": {GPU: 1}}, "$job has no nvidia.com/gpu limit"
    ),
    "a GPU on the runner": (
        K8S, f"{RUNNER}.resources.limits.{GPU}", 1, "the runner container asks for"
    ),
    "no GPU on the Docker engine": (
        DIND, f"template.spec.containers.1.resources.limits.{GPU}", None, "no privileged engine"
    ),
    "the chart's own dind mode": (DIND, "containerMode", {"type": "dind"}, "containerMode: unset"),
    "a /dev/shm of 64 MiB": (
        HOOK, "spec.volumes.0.emptyDir.sizeLimit", "64Mi", "/dev/shm is not a memory-backed"
    ),
    "no /dev/shm": (HOOK, f"{JOB}.volumeMounts", None, "no /dev/shm mount"),
    "the hook template not mounted": (
        K8S, f"{RUNNER}.env.0.value", "/home/runner/elsewhere/job-gpu1.yaml", "names no hook"
    ),
    "no toleration of the GPU taint": (HOOK, "spec.tolerations", None, "no nodeSelector"),
    "a scale set named for another GPU count": (
        K8S, "runnerScaleSetName", "compilegate-gpu2", "'compilegate-gpu1' is compilegate plan's"
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BROKEN, ids=str)
def test_the_pool_templates_pass_and_a_broken_one_is_refused(case: str) -> None:
    file_name, path, value, said = BROKEN[case]
    pool = copy.deepcopy(load_pool())
    if file_name is None:
        assert set(pool) == SHIPPED, "templates of both shapes, each checked below"
        assert pool_problems(pool) == []
        return
    _set(pool[file_name], path, value)
    problems = pool_problems(pool)
    assert len(problems) == 1 and said in problems[0], problems
