"""One Docker image per PyTorch version: what goes into it, its tag, and building or reusing it.

The tag is `compilegate-torch:<version>-<12 hex>`, the hex a sha256 over everything the build
reads — the Dockerfile, pyproject.toml, README.md, runner/ and schemas/ sources, the base image's
id, the index URL, the wheel files placed in the context, whether the build is offline, the
user's requirements and whether they may be built from source — so an image is rebuilt exactly
when one of them changed, and reused otherwise.

The user's requirements count by what pip reads (requirements.normalized_requirements):
a changed comment, blank line, surrounding blank or the order of requirement lines names the
same image. What a build leaves, and what it removes first to stay within a disk budget (the
images an earlier compilegate built, this compilegate's least recently used beyond
`keep_images` per torch version, its own build stage afterwards), is image_store.py's.

The user's requirements come as bytes (containers/requirements.py read them from the checkout,
no link followed), written into the context: never a path the build would follow. Builds run
on the engine's default network unless told otherwise (`build_network`, the CLI's
--build-network): on a runner with Docker's default bridge the build has its own network
namespace, so the runner's services on 127.0.0.1 (a cloud agent, a metrics endpoint, a
credential helper) are out of the build's reach, which the host network (`host`) would put
within it; the bridge still reaches the internet (pip's index) and the host's addresses bound
beyond loopback. An engine without a bridge (scripts/docker-setup.sh's: `--bridge=none`)
builds with `host`, or `none` for an offline (`wheels_only`) build.

Builds use the host's pip trust: the CA bundle `PIP_CERT` names is copied into the context
(certs/pip-cert.pem), and a torch wheel of that version the host's pip configuration points
at (find-links folders, file:// indexes) is copied into wheels/ and installed by its path — the
way a CPU-only build on disk gets into the image. Its dependencies come from the index:
copying a CUDA torch's 3 GB of local dependency wheels into the context cost more (hash,
upload, COPY: about a minute here) than fetching them, and pip took the index's copies of the
same versions anyway. With `wheels_only` the local dependency wheels are copied too and the
build uses no index (an offline build; it fails if a dependency is not on disk). The Docker
client is passed in.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
import shutil
import tempfile
import time
import zipfile
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .image_store import (
    BUILD_STAGE_ARG,
    DEFAULT_KEEP_IMAGES,
    IMAGE_REPOSITORY,
    LABEL_INPUTS_SHA256,
    LABEL_SOURCES_SHA256,
    LABEL_TORCH_VERSION,
    kept_in_use,
    mark_used,
    plan_removals,
    prune_build_stages,
    remove_images,
    remove_untagged_image,
    stored_images,
)
from .outcome import EnvironmentBuildError, LogSink
from .requirements import normalized_requirements

# The Dockerfile's own default: a plain Debian with Python 3.11; CUDA comes with the wheels.
DEFAULT_BASE_IMAGE = "debian:bookworm-slim"
# Made without any registry by scripts/docker-setup.sh (debootstrap + docker import).
LOCAL_BASE_IMAGE = "compilegate-base:bookworm"
SOURCE_FILES = ("Dockerfile", "pyproject.toml", "README.md")
SOURCE_DIRS = ("runner", "schemas")
CERT_NAME = "certs/pip-cert.pem"
# The user's own dependencies, installed at build time (with the network) beside torch: wheels
# only unless REQUIREMENTS_SOURCE_BUILDS=1 (containers/requirements.py says why).
REQUIREMENTS_NAME = "requirements/requirements.txt"
LOG_TAIL_LINES = 30

_WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[(?P<extras>[^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_HREF = re.compile(r"""href=["']([^"'#]+)""")


def normalize_name(name: str) -> str:
    """PEP 503 normalized project name (`Typing_Extensions` → `typing-extensions`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class ImageSpec:
    """Everything one image is built from. Build it with `from_host` to pick up the host's
    pip trust and local wheels, or directly (tests, explicit offline wheelhouses)."""

    torch_version: str
    source_root: Path
    base_image: str = DEFAULT_BASE_IMAGE
    index_url: str | None = None
    wheels: tuple[Path, ...] = ()
    ca_bundle: Path | None = None
    wheels_only: bool = False
    requirements: bytes | None = None
    requirements_source_builds: bool = False

    @classmethod
    def from_host(
        cls,
        torch_version: str,
        *,
        source_root: Path,
        base_image: str = DEFAULT_BASE_IMAGE,
        index_url: str | None = None,
        wheel_dirs: Iterable[Path] | None = None,
        wheels_only: bool = False,
        environ: Mapping[str, str] | None = None,
        requirements: bytes | None = None,
        requirements_source_builds: bool = False,
    ) -> ImageSpec:
        """The spec for `torch_version` with the host's CA bundle (`PIP_CERT`) and the local
        wheel of that torch (from `wheel_dirs`, by default the folders the host's pip
        configuration names); with `wheels_only`, its local dependencies' wheels too."""
        environ = os.environ if environ is None else environ
        dirs = tuple(wheel_dirs) if wheel_dirs is not None else host_wheel_dirs(environ)
        cert = environ.get("PIP_CERT") or _pip_config_value(environ, "cert")
        ca_bundle = Path(cert) if cert and Path(cert).is_file() else None
        return cls(
            torch_version=torch_version,
            source_root=Path(source_root).resolve(),
            base_image=base_image,
            index_url=index_url,
            wheels=local_wheels_for(torch_version, dirs, with_dependencies=wheels_only),
            ca_bundle=ca_bundle,
            wheels_only=wheels_only,
            requirements=requirements,
            requirements_source_builds=requirements_source_builds,
        )

    def build_args(self) -> dict[str, str]:
        return {
            "BASE_IMAGE": self.base_image,
            "TORCH_VERSION": self.torch_version,
            "TORCH_INDEX_URL": self.index_url or "",
            "WHEELS_ONLY": "1" if self.wheels_only else "0",
            "REQUIREMENTS_SOURCE_BUILDS": "1" if self.requirements_source_builds else "0",
        }

    def source_files(self) -> list[tuple[str, Path]]:
        """(path in the build context, host file) for compilegate's own files: SOURCE_FILES
        and SOURCE_DIRS, no bytecode."""
        root = self.source_root
        files = [(name, root / name) for name in SOURCE_FILES]
        for folder in SOURCE_DIRS:
            for path in sorted((root / folder).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    files.append((path.relative_to(root).as_posix(), path))
        return files

    def context_files(self) -> list[tuple[str, Path]]:
        """(path in the build context, host file) for every file of the host the build reads,
        sorted; the requirements' bytes (REQUIREMENTS_NAME) come beside them."""
        files = self.source_files()
        files.extend((f"wheels/{wheel.name}", wheel) for wheel in self.wheels)
        if self.ca_bundle is not None:
            files.append((CERT_NAME, self.ca_bundle))
        return sorted(files)


@dataclass(frozen=True)
class BuiltImage:
    """An image ready to run: built now (`reused` False) or found with the same tag."""

    tag: str
    image_id: str
    torch_version: str
    reused: bool
    build_s: float
    size_bytes: int


def inputs_digest(spec: ImageSpec, base_image_id: str) -> str:
    """sha256 over the build's inputs: each context file's path and content, the base image
    id, the build arguments, and the requirements as pip reads them (comments, blank lines,
    surrounding blanks and the order of requirement lines left out: the same install)."""
    digest = hashlib.sha256()
    for arcname, path in spec.context_files():
        digest.update(f"file {arcname} {_file_sha256(path)}\n".encode())
    requirements = normalized_requirements(spec.requirements or b"")
    if requirements:  # one with comments only installs nothing: the image without any
        content = hashlib.sha256(requirements.encode()).hexdigest()
        digest.update(f"requirements {content}\n".encode())
    digest.update(f"base {base_image_id}\n".encode())
    for key, value in sorted(spec.build_args().items()):
        if key != "BASE_IMAGE":  # the id above says more than the name
            digest.update(f"arg {key}={value}\n".encode())
    return digest.hexdigest()


def sources_digest(spec: ImageSpec) -> str:
    """sha256 over compilegate's own files (`ImageSpec.source_files`): which compilegate an
    image was built from, whatever else went into it."""
    digest = hashlib.sha256()
    for arcname, path in spec.source_files():
        digest.update(f"file {arcname} {_file_sha256(path)}\n".encode())
    return digest.hexdigest()


def remove_superseded(client: Any, sources: str, *, log: LogSink = print) -> int:
    """Removes every image of ours whose sources label is not `sources` (image_store.py says
    why); returns the bytes those images took. An image a container uses is kept, and said
    so."""
    images = stored_images(client)
    kept_in_use(images, sources, log=log)
    plan = plan_removals(images, sources=sources, keep_images=10**9)
    return remove_images(client, [r for r in plan if r.reason == "superseded"], log=log)


def image_tag(torch_version: str, digest: str) -> str:
    """`compilegate-torch:2.13.0-<12 hex>`; a local version label's `+` becomes `_`."""
    safe_version = re.sub(r"[^A-Za-z0-9_.-]", "_", torch_version)
    return f"{IMAGE_REPOSITORY}:{safe_version}-{digest[:12]}"


def ensure_image(
    client: Any,
    spec: ImageSpec,
    *,
    rebuild: bool = False,
    log: LogSink = print,
    build_network: str | None = None,
    keep_superseded: bool = False,
    keep_images: int = DEFAULT_KEEP_IMAGES,
) -> BuiltImage:
    """Reuse the image with this spec's tag (its last use renewed), or build it on
    `build_network` (None: the engine's default; the module docstring says why), streaming
    the build output prefixed with `[torch X]`. Before a build, the images an earlier
    compilegate built go (unless `keep_superseded`) and so do this version's least recently
    used beyond `keep_images`; after it, its build stage (image_store.py). Raises
    EnvironmentBuildError with the log's last lines when the build fails."""
    prefix = f"[torch {spec.torch_version}]"
    base_id = _image_id_or_name(client, spec.base_image)
    digest = inputs_digest(spec, base_id)
    tag = image_tag(spec.torch_version, digest)
    previous = _find_image(client, tag)
    if previous is not None and not rebuild:
        mark_used(client, previous.id, tag)
        log(f"{prefix} reusing image {tag}")
        return BuiltImage(tag, previous.id, spec.torch_version, True, 0.0, _size(previous))
    sources = sources_digest(spec)
    _make_room(client, spec, sources, tag, keep_superseded, keep_images, prefix, log)
    log(f"{prefix} building image {tag} from {spec.base_image}")
    started = time.perf_counter()
    tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
    try:
        _build(client, spec, tag, digest, sources, build_network, tail, prefix, log)
    finally:  # a failed build leaves its stage's last good layer: the same label
        _remove_build_stage(client, digest, prefix, log)
    image = _find_image(client, tag)
    if image is None:
        raise EnvironmentBuildError(
            spec.torch_version, f"image build ended without an image {tag}", tuple(tail)
        )
    if previous is not None and previous.id != image.id:  # a rebuild: the old one is untagged
        remove_untagged_image(client, previous.id)
    build_s = time.perf_counter() - started
    log(f"{prefix} built {tag} in {build_s:.0f} s")
    return BuiltImage(tag, image.id, spec.torch_version, False, build_s, _size(image))


def _make_room(
    client: Any,
    spec: ImageSpec,
    sources: str,
    tag: str,
    keep_superseded: bool,
    keep_images: int,
    prefix: str,
    log: LogSink,
) -> None:
    """Before a build, which needs the room: image_store.plan_removals for this build."""

    def prefixed(line: str) -> None:
        log(f"{prefix} {line}")

    images = stored_images(client)
    if not keep_superseded:
        kept_in_use(images, sources, log=prefixed)
    plan = plan_removals(
        images,
        sources=sources,
        keep_images=keep_images,
        superseded=not keep_superseded,
        building=(spec.torch_version, tag),
    )
    remove_images(client, plan, log=prefixed)


def _remove_build_stage(client: Any, digest: str, prefix: str, log: LogSink) -> None:
    """The build's stage removed (image_store.prune_build_stages); an engine that fails here
    (gone mid-build) must not hide the build's own error: it is said in one line."""
    try:
        freed = prune_build_stages(client, digest)
    except Exception as exc:  # the engine's error, whatever its kind
        log(f"{prefix} warning: the build stage was not removed: {type(exc).__name__}: {exc}")
        return
    if freed:
        log(f"{prefix} removed the build stage ({freed / 1e9:.1f} GB)")


def _build(
    client: Any,
    spec: ImageSpec,
    tag: str,
    digest: str,
    sources: str,
    build_network: str | None,
    tail: deque[str],
    prefix: str,
    log: LogSink,
) -> None:
    """One build through the engine's classic builder, its output streamed to `log`; the
    build stage is labelled with `digest` (BUILD_STAGE_ARG) for its removal."""
    with tempfile.TemporaryDirectory(prefix="compilegate-build-") as context:
        _assemble_context(spec, Path(context))
        try:
            stream = client.api.build(
                path=context,
                tag=tag,
                buildargs={**spec.build_args(), BUILD_STAGE_ARG: digest},
                labels={
                    LABEL_TORCH_VERSION: spec.torch_version,
                    LABEL_INPUTS_SHA256: digest,
                    LABEL_SOURCES_SHA256: sources,
                },
                network_mode=build_network,
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
            )
            for chunk in stream:
                error = chunk.get("error") or (chunk.get("errorDetail") or {}).get("message")
                if error:
                    for line in str(error).splitlines():
                        tail.append(line)
                        log(f"{prefix} {line}")
                    raise EnvironmentBuildError(
                        spec.torch_version, "image build failed", tuple(tail)
                    )
                for line in str(chunk.get("stream", "")).splitlines():
                    if line.strip():
                        tail.append(line)
                        log(f"{prefix} {line}")
        except EnvironmentBuildError:
            raise
        except Exception as exc:  # the engine refused (bad context, daemon gone, ...)
            tail.append(f"{type(exc).__name__}: {exc}")
            raise EnvironmentBuildError(
                spec.torch_version, "image build failed", tuple(tail)
            ) from exc


# --- local wheels --------------------------------------------------------------------------


def host_wheel_dirs(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """Folders of wheel files the host's pip is configured to use: `find-links` entries and
    the files of `file://` indexes, from PIP_* variables and pip's configuration files."""
    environ = os.environ if environ is None else environ
    locations: list[str] = []
    for key in ("find-links", "index-url", "extra-index-url"):
        env_value = environ.get("PIP_" + key.upper().replace("-", "_"))
        if env_value:
            locations.extend(env_value.split())
        config_value = _pip_config_value(environ, key)
        if config_value:
            locations.extend(config_value.split())
    dirs: list[Path] = []
    for location in locations:
        path = _local_path(location)
        if path is None or not path.is_dir():
            continue
        if any(path.glob("*.whl")):
            dirs.append(path)
        else:  # a simple index: <index>/<project>/index.html linking to the files
            dirs.extend(_simple_index_file_dirs(path))
    return tuple(dict.fromkeys(d.resolve() for d in dirs))


def local_wheels_for(
    torch_version: str, wheel_dirs: Iterable[Path], *, with_dependencies: bool = True
) -> tuple[Path, ...]:
    """The torch wheels of exactly `torch_version` (any local label, e.g. `+cpu`) in
    `wheel_dirs`, plus (`with_dependencies`) the local wheels of their dependencies,
    transitively (by name; pip picks the version). Empty when no folder holds that torch."""
    by_name: dict[str, list[Path]] = {}
    for folder in wheel_dirs:
        for wheel in sorted(Path(folder).glob("*.whl")):
            match = _WHEEL_NAME.match(wheel.name)
            if match:
                by_name.setdefault(normalize_name(match["name"]), []).append(wheel)
    wanted = torch_version.split("+")[0]
    torch_wheels = [
        w
        for w in by_name.get("torch", [])
        if _WHEEL_NAME.match(w.name)["version"].split("+")[0] == wanted  # type: ignore[index]
    ]
    if not with_dependencies:
        return tuple(torch_wheels)
    chosen: dict[Path, None] = {}
    queue: list[tuple[Path, frozenset[str]]] = [(w, frozenset()) for w in torch_wheels]
    seen: set[tuple[str, frozenset[str]]] = set()
    while queue:
        wheel, extras = queue.pop()
        chosen[wheel] = None
        for name, dep_extras in _requirements(wheel, extras):
            key = (name, dep_extras)
            if key in seen:
                continue
            seen.add(key)
            queue.extend((dep, dep_extras) for dep in by_name.get(name, []))
    return tuple(chosen)


def _requirements(wheel: Path, extras: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """(normalized name, requested extras) of each Requires-Dist of a wheel that applies
    without an extra or with one of `extras`. Other markers are not evaluated: a wheel too
    many in the context costs only its copy."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            metadata_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = archive.read(metadata_name).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, StopIteration):
        return []
    found = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement, _, marker = line[len("Requires-Dist:") :].partition(";")
        extra = _EXTRA_MARKER.search(marker)
        if extra and normalize_name(extra.group(1)) not in extras:
            continue
        match = _REQUIREMENT.match(requirement)
        if match:
            dep_extras = frozenset(
                normalize_name(e) for e in (match["extras"] or "").split(",") if e.strip()
            )
            found.append((normalize_name(match["name"]), dep_extras))
    return found


def _pip_config_value(environ: Mapping[str, str], key: str) -> str | None:
    """A `[global]`/`[install]` value from pip's configuration files (later files win, as
    in pip: site-wide, then user, then PIP_CONFIG_FILE)."""
    home = Path(environ.get("HOME", str(Path.home())))
    xdg_dirs = environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    candidates = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs if d]
    candidates += [Path("/etc/pip.conf"), home / ".pip" / "pip.conf"]
    candidates.append(Path(environ.get("XDG_CONFIG_HOME", str(home / ".config"))) / "pip/pip.conf")
    if environ.get("PIP_CONFIG_FILE"):
        candidates.append(Path(environ["PIP_CONFIG_FILE"]))
    value = None
    for candidate in candidates:
        if not candidate.is_file():
            continue
        parser = configparser.ConfigParser()
        try:
            parser.read(candidate)
        except configparser.Error:
            continue
        for section in ("global", "install"):
            if parser.has_option(section, key):
                value = parser.get(section, key)
    return value


def _local_path(location: str) -> Path | None:
    if location.startswith("file:"):
        return Path(unquote(urlparse(location).path))
    if "://" in location:
        return None
    return Path(location)


def _simple_index_file_dirs(index: Path) -> list[Path]:
    dirs: dict[Path, None] = {}
    for page in index.glob("*/index.html"):
        try:
            text = page.read_text(errors="replace")
        except OSError:
            continue
        for href in _HREF.findall(text):
            if href.endswith(".whl") and "://" not in href:
                dirs[(page.parent / unquote(href)).resolve().parent] = None
    return list(dirs)


# --- helpers ------------------------------------------------------------------------------

_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_sha256(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime): a torch wheel is 0.2-1 GB."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def _assemble_context(spec: ImageSpec, context: Path) -> None:
    """Hard-link (or copy, across file systems) the build's files into `context`."""
    for arcname, source in spec.context_files():
        target = context / arcname
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)
    if spec.requirements is not None:
        target = context / REQUIREMENTS_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(spec.requirements)


def _image_id_or_name(client: Any, name: str) -> str:
    image = _find_image(client, name)
    return image.id if image is not None else name


def _find_image(client: Any, name: str) -> Any | None:
    from docker.errors import ImageNotFound

    try:
        return client.images.get(name)
    except ImageNotFound:
        return None


def _size(image: Any) -> int:
    return int(image.attrs.get("Size", 0))
