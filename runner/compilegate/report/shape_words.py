"""Where am I, in one line: the shape containers/shape.py found and what to use there
(`compilegate where`, and the refusal of `matrix --backend docker` before its first Docker
call); and who the image backend's children run as (run/child_user.py)."""

from __future__ import annotations

from ..containers.shape import BackendFit, Shape, ShapeFacts
from ..run.child_user import ChildUser

POOL_EXAMPLE = "examples/workflows/pool.yml"
SECURITY_PAGE = "docs/security.md"


def shape_line(fit: BackendFit) -> str:
    """One line: where we are, whether the backend asked for works here, what to use."""
    facts = fit.facts
    if fit.backend == "docker":
        return _docker_line(fit)
    if fit.backend == "image":
        if facts.torch_version is None:
            return (
                f"compilegate: backend image measures with this interpreter's torch, and it "
                f"has none: run compilegate from the image (its `compilegate` on PATH), or "
                f"give run --python an interpreter with torch ({_where(facts)})"
            )
        if facts.job_container:
            return (
                f"compilegate: inside a job container ({_where(facts)}): backend image "
                f"measures with its torch {facts.torch_version}, no Docker; the pull "
                f"request's code shares this container, so this job must hold no write token "
                f"and no secret, and a job that runs none of it judges and publishes "
                f"({POOL_EXAMPLE})"
            )
        return (
            f"compilegate: not inside a job container ({_where(facts)}): backend image "
            f"measures with this interpreter's torch {facts.torch_version} on this machine, as "
            f"its user: for your own code ({SECURITY_PAGE})"
        )
    return (
        f"compilegate: {_where(facts)}: backend {fit.backend} measures on this machine, as its "
        f"user: for your own code ({SECURITY_PAGE})"
    )


def _docker_line(fit: BackendFit) -> str:
    facts = fit.facts
    engine = facts.engine
    if engine is None:
        where = (
            "inside a job container, where a runner pool's kubernetes mode gives a job no engine"
            if facts.job_container
            else "not inside a job container"
        )
        return (
            f"compilegate: no Docker engine at {facts.docker_host} ({facts.engine_error}); "
            f"{where}: {_use_instead(fit)}"
        )
    if fit.fits and facts.shape is Shape.DOCKER_GPU:
        return (
            f"compilegate: a Docker engine at {engine.address} (Docker "
            f"{engine.server_version}) that hands a container the GPU: backend docker "
            "measures each version in its own container"
        )
    if fit.fits:
        return (
            f"compilegate: a Docker engine at {engine.address} (Docker "
            f"{engine.server_version}) without the NVIDIA runtime: backend docker measures on "
            "the CPU (no GPU asked for, no step with device: cuda)"
        )
    askers = [f"step {name} (device: cuda)" for name in fit.gpu_steps]
    if fit.gpus_requested:
        askers.insert(0, "--gpus")
    return (
        f"compilegate: the Docker engine at {engine.address} (Docker "
        f"{engine.server_version}) cannot hand a container the GPU (no NVIDIA runtime) that "
        f"{' and '.join(askers)} ask{'s' if len(askers) == 1 else ''} for, and compilegate "
        f"never measures a GPU step on the CPU: {_use_instead(fit)}"
    )


def _use_instead(fit: BackendFit) -> str:
    facts = fit.facts
    image_job = (
        f"make the compilegate image the job container (jobs.<id>.container.image), its GPU "
        f"from the pod's nvidia.com/gpu, and run compilegate run --backend image in it "
        f"({POOL_EXAMPLE})"
    )
    if facts.job_container and facts.torch_version is not None:
        return (
            f"run this image's compilegate here, with its torch {facts.torch_version}: "
            f"compilegate run --backend image, the job holding no write token and no secret "
            f"({POOL_EXAMPLE})"
        )
    if facts.job_container:
        return image_job
    if facts.engine is not None:  # an engine that cannot hand a container the GPU
        if facts.kubernetes:  # ARC's dind sidecar: the chart renders it (ARC #3547, #2553)
            return f"a dind sidecar cannot be given one; in the pool's kubernetes mode, {image_job}"
        return (
            "install the NVIDIA Container Toolkit where the engine runs (nvidia-ctk runtime "
            f"configure --runtime=docker), or {image_job}"
        )
    if facts.torch_version is not None:
        return (
            f"start the engine, or measure with this interpreter's torch "
            f"{facts.torch_version} (backend image: for your own code, {SECURITY_PAGE}); on a "
            f"runner pool, {image_job}"
        )
    return f"start the engine, or {image_job}"


def _where(facts: ShapeFacts) -> str:
    if facts.engine is not None:
        return f"a Docker engine at {facts.engine.address}"
    if facts.kubernetes:
        return "no Docker engine, in a Kubernetes pod"
    return "no Docker engine"


def child_user_line(user: ChildUser) -> str:
    """Who the image backend's measuring children run as, and why (stderr, one line)."""
    if user.uid is not None and user.switched:
        return (
            f"note: the measuring children run as {user.name} (uid {user.uid}), not as this "
            "job's root: they cannot read this process's environment or write its files"
        )
    if user.reason == "not-root":
        return f"note: the measuring children run as this job's user (uid {user.current_uid})"
    if user.reason == "no-user":
        return (
            f"note: the measuring children run as root: this image has no user "
            f"{user.name} to run them as (the compilegate image has one, uid 1000)"
        )
    return (
        "note: the measuring children run as root: this container may not change user "
        "(no CAP_SETUID/CAP_SETGID; run the job container as uid 1000 instead)"
    )
