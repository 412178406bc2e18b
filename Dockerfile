# compilegate in a container: one image per PyTorch version, for `compilegate matrix` and the
# GitHub Action. Build from the repository root (compilegate.containers.images builds it the
# same way, from a context it assembles):
#
#   docker build --network host --build-arg TORCH_VERSION=2.13.0 -t compilegate-torch:2.13.0 .
#
# Run it with the repository read-only at /workspace, results written to /out, no network:
#
#   docker run --rm --network none -v "$PWD:/workspace:ro" -v "$PWD/out:/out" \
#     compilegate-torch:2.13.0 run --config compilegate.yml --out /out/result.json
#
# As a job container (`jobs.<id>.container.image`, on a runner pool whose jobs have no Docker
# engine): `compilegate run --backend image` measures with this image's torch, no Docker; run
# the container as root (`options: --user 0`, or the pod's runAsUser: 0) and the measuring
# children run as uid 1000 (examples/workflows/pool.yml, docs/security.md).
#
# BASE_IMAGE: any Debian-family image whose python3 has venv, headers and a C/C++ compiler
# from apt. The default is a plain Debian one, not nvidia/cuda: PyTorch's CUDA wheels from
# the package index carry their own CUDA runtime, cuDNN and NCCL libraries (the nvidia-* wheel
# dependencies), and `docker run --gpus all` with the NVIDIA Container Toolkit injects the
# driver (libcuda) into the container, so the same image runs on CPU and GPU hosts. Offline,
# use a local image made by scripts/docker-setup.sh (compilegate-base:bookworm). Debian
# bookworm's python3 is 3.11; a wheel in wheels/ must match the base image's Python.
ARG BASE_IMAGE=debian:bookworm-slim

# --- system: Python with venv and headers, gcc/g++ (Inductor compiles C++ on the CPU; Triton
# compiles a small C launcher on the GPU), git (as a job container: actions/checkout makes a
# real checkout with it, and compilegate reads the checkout's git config for a persisted
# token before it measures, and finds paired mode's base commit). Shared by every torch
# version's image.
FROM ${BASE_IMAGE} AS system
# DL3008 (pin apt versions) is ignored on purpose: a stable release's archive keeps only its
# current security-patched version of each package, so a pin breaks the build at the next
# point release. The base image tag (or digest) is what pins the distribution.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-dev gcc g++ libc6-dev git \
 && rm -rf /var/lib/apt/lists/*

# --- build: a virtual environment with torch and compilegate. Nothing of this stage but the
# environment reaches the final image (no wheels, no certificates, no pip configuration).
FROM system AS build
# The classic builder leaves this stage's last image untagged (1.7 GB for a CPU torch):
# compilegate labels it with the build's inputs sha256 and removes it after the build
# (containers/image_store.py). Empty when built by hand: `docker image prune --filter
# label=compilegate.build-stage` finds it too.
ARG COMPILEGATE_BUILD_STAGE=""
LABEL compilegate.build-stage="${COMPILEGATE_BUILD_STAGE}"
ARG TORCH_VERSION
# A package index for torch only (a CUDA or CPU index); empty: the default index.
ARG TORCH_INDEX_URL=""
# 1: install only from wheels/ (an offline build); 0: wheels/ first, then the index.
ARG WHEELS_ONLY=0
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Optional folders: wheels/ (torch and its dependencies as wheel files, used when they match)
# and certs/pip-cert.pem (the CA bundle pip should trust, e.g. the host's PIP_CERT). The
# pattern matches nothing when a folder is absent; pyproject.toml keeps the COPY valid.
COPY pyproject.toml wheel[s] /tmp/wheels/
COPY pyproject.toml cert[s] /tmp/certs/
RUN set -eu; \
    if [ -z "${TORCH_VERSION}" ]; then echo "build arg TORCH_VERSION is required" >&2; exit 2; fi; \
    { echo "[global]"; \
      echo "find-links = /tmp/wheels"; \
      echo "disable-pip-version-check = true"; \
      if [ -s /tmp/certs/pip-cert.pem ]; then echo "cert = /tmp/certs/pip-cert.pem"; fi; \
      if [ "${WHEELS_ONLY}" = 1 ]; then echo "no-index = true"; fi; \
    } > /etc/pip.conf; \
    python3 -m venv /opt/compilegate
# A torch wheel of this version and this Python in wheels/ is installed by its path: pip
# prefers an index's file to a find-links file of the same version, so naming it is the only
# way to be sure the local (e.g. CPU-only) build is the one installed.
RUN set -eu; \
    index=(); \
    if [ -n "${TORCH_INDEX_URL}" ] && [ "${WHEELS_ONLY}" != 1 ]; then index=(--index-url "${TORCH_INDEX_URL}"); fi; \
    python_tag="$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"; \
    shopt -s nullglob; \
    local_wheels=(/tmp/wheels/torch-"${TORCH_VERSION}"-*-"${python_tag}"-*.whl \
                  /tmp/wheels/torch-"${TORCH_VERSION}"+*-"${python_tag}"-*.whl); \
    torch="torch==${TORCH_VERSION}"; \
    if [ "${#local_wheels[@]}" -gt 0 ]; then torch="${local_wheels[0]}"; fi; \
    /opt/compilegate/bin/pip install --no-cache-dir --progress-bar off "${index[@]}" "${torch}"; \
    /opt/compilegate/bin/python -c "import sys, torch; v = torch.__version__.split('+')[0]; \
sys.exit(0 if v == '${TORCH_VERSION}'.split('+')[0] else 'installed torch ' + torch.__version__)"
# The user's own dependencies (`compilegate matrix --requirements`, the action's
# `requirements` input), installed here, at build time with the network, beside this torch,
# which they may not replace; the measured run has no network. Wheels only (a wheel is
# unpacked, an sdist's build code runs here, with the network) unless
# REQUIREMENTS_SOURCE_BUILDS=1 (--requirements-allow-source-builds).
ARG REQUIREMENTS_SOURCE_BUILDS=0
COPY pyproject.toml requirement[s] /tmp/requirements/
RUN set -eu; \
    if [ -s /tmp/requirements/requirements.txt ]; then \
      echo "torch==${TORCH_VERSION}" > /tmp/torch-constraint.txt; \
      binary="--only-binary=:all:"; \
      if [ "${REQUIREMENTS_SOURCE_BUILDS}" = 1 ]; then binary=""; fi; \
      /opt/compilegate/bin/pip install --no-cache-dir --progress-bar off ${binary:+"$binary"} \
        --constraint /tmp/torch-constraint.txt --requirement /tmp/requirements/requirements.txt \
      || { if [ -n "$binary" ]; then \
             echo "ERROR: requirements: pip install failed (above); only wheels are installed: a package with no wheel for this Python needs --requirements-allow-source-builds (its build code then runs at image build time, with the network)" >&2; \
           fi; exit 1; }; \
    fi
COPY pyproject.toml README.md /src/
COPY runner/ /src/runner/
COPY schemas/ /src/schemas/
RUN /opt/compilegate/bin/pip install --no-cache-dir --progress-bar off /src

# --- the image: the environment, a non-root user, the documented mount points.
FROM system
ARG TORCH_VERSION
LABEL org.opencontainers.image.title="compilegate" \
      org.opencontainers.image.description="compilegate with torch ${TORCH_VERSION}" \
      compilegate.torch-version="${TORCH_VERSION}"
COPY --from=build /opt/compilegate /opt/compilegate
# /workspace: the repository, mounted read-only. /out: results, mounted writable.
# /cache: optional Inductor cache volume. TORCHINDUCTOR_CACHE_DIR is deliberately not set:
# compilegate gives every child process a fresh cache (cold compiles, what it measures);
# pass `--inductor-cache /cache` with a volume there to share warm caches instead.
RUN useradd --uid 1000 --user-group --no-create-home --home-dir /tmp \
      --shell /usr/sbin/nologin compilegate \
 && mkdir -p /workspace /out /cache \
 && chown compilegate:compilegate /out /cache
# HOME=/tmp: writable for any uid the container runs as (the backend may pass the host's).
# NVIDIA_*: what the NVIDIA Container Toolkit exposes under --gpus (compute, nvidia-smi).
ENV PATH=/opt/compilegate/bin:${PATH} \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /workspace
USER 1000:1000
ENTRYPOINT ["compilegate"]
CMD ["--help"]
