"""Image tags follow the build's inputs; local wheels are found the way pip would see them."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from compilegate.containers.images import (
    ImageSpec,
    ensure_image,
    host_wheel_dirs,
    image_tag,
    inputs_digest,
    local_wheels_for,
    sources_digest,
)
from compilegate.containers.outcome import EnvironmentBuildError
from compilegate.containers.requirements import normalized_requirements


def make_source(root: Path) -> Path:
    for name, text in {
        "Dockerfile": "FROM x\n",
        "pyproject.toml": "[project]\n",
        "README.md": "# r\n",
        "runner/compilegate/__init__.py": "",
        "runner/compilegate/cli.py": "print(1)\n",
        "schemas/config.schema.json": "{}\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def make_wheel(folder: Path, filename: str, requires: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name, version = filename.split("-")[:2]
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", metadata)
    path = folder / filename
    path.write_bytes(buffer.getvalue())
    return path


def digest(spec: ImageSpec, base_id: str = "sha256:base") -> str:
    return inputs_digest(spec, base_id)


def test_digest_changes_with_every_input_and_only_then(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root, base_image="compilegate-base:bookworm")
    first = digest(spec)
    assert digest(spec) == first

    (root / "runner/compilegate/__pycache__").mkdir()
    (root / "runner/compilegate/__pycache__/cli.cpython-311.pyc").write_bytes(b"x")
    assert digest(spec) == first, "bytecode is not a build input"

    seen = {first}

    def changed(new: str) -> None:
        assert new not in seen
        seen.add(new)

    changed(digest(spec, "sha256:other-base"))
    changed(digest(ImageSpec("2.14.1", root, base_image="compilegate-base:bookworm")))
    changed(digest(ImageSpec("2.13.0", root, "compilegate-base:bookworm", index_url="file:///i")))
    changed(digest(ImageSpec("2.13.0", root, "compilegate-base:bookworm", wheels_only=True)))
    wheel = make_wheel(tmp_path / "w", "torch-2.13.0-cp311-cp311-linux_x86_64.whl", [])
    changed(digest(ImageSpec("2.13.0", root, "compilegate-base:bookworm", wheels=(wheel,))))
    cert = tmp_path / "ca.pem"
    cert.write_text("CERT")
    changed(digest(ImageSpec("2.13.0", root, "compilegate-base:bookworm", ca_bundle=cert)))
    with_requirements = ImageSpec(
        "2.13.0", root, "compilegate-base:bookworm", requirements=b"transformers==5.0\n"
    )
    changed(digest(with_requirements))
    another = dataclasses.replace(with_requirements, requirements=b"transformers==5.1\n")
    changed(digest(another))  # another requirement is another image
    changed(digest(dataclasses.replace(another, requirements_source_builds=True)))
    for name in ("Dockerfile", "pyproject.toml", "runner/compilegate/cli.py"):
        (root / name).write_text((root / name).read_text() + "# changed\n")
        changed(digest(spec))
    (root / "schemas/new.schema.json").write_text("{}")
    changed(digest(spec))


def test_tag_names_the_version() -> None:
    assert image_tag("2.13.0", "ab" * 32) == "compilegate-torch:2.13.0-" + "ab" * 6
    assert image_tag("2.13.0+cpu", "0" * 64).startswith("compilegate-torch:2.13.0_cpu-")


def test_local_wheels_follow_dependencies_and_requested_extras(tmp_path: Path) -> None:
    files = tmp_path / "files"
    torch = make_wheel(
        files,
        "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        [
            "sympy>=1.13",
            "cuda-toolkit[cublas]==13.0; platform_system == 'Linux'",
            'opt-einsum>=3.3; extra == "opt-einsum"',
        ],
    )
    make_wheel(files, "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl", [])
    sympy = make_wheel(files, "sympy-1.14.0-py3-none-any.whl", ["mpmath<1.4"])
    mpmath = make_wheel(files, "mpmath-1.3.0-py3-none-any.whl", [])
    toolkit = make_wheel(
        files,
        "cuda_toolkit-13.0.3.0-py2.py3-none-any.whl",
        ['nvidia-cublas==13.1; extra == "cublas"', 'nvidia-cufft==12; extra == "cufft"'],
    )
    cublas = make_wheel(files, "nvidia_cublas-13.1.1.3-py3-none-any.whl", [])
    make_wheel(files, "nvidia_cufft-12.0.0.61-py3-none-any.whl", [])
    make_wheel(files, "opt_einsum-3.4.0-py3-none-any.whl", [])

    found = set(local_wheels_for("2.13.0", [files]))
    assert found == {torch, sympy, mpmath, toolkit, cublas}
    assert local_wheels_for("9.9.9", [files]) == ()
    assert local_wheels_for("2.13.0", [files], with_dependencies=False) == (torch,)


def test_wheel_folders_come_from_pip_settings(tmp_path: Path) -> None:
    find_links = tmp_path / "find-links"
    make_wheel(find_links, "torch-2.13.0-cp311-cp311-linux_x86_64.whl", [])
    files = tmp_path / "index" / "files"
    make_wheel(files, "torch-2.14.1-cp311-cp311-linux_x86_64.whl", [])
    page = tmp_path / "index" / "simple" / "torch" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        '<a href="../../files/torch-2.14.1-cp311-cp311-linux_x86_64.whl#sha256=00">t</a>'
    )
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nextra-index-url = file://{tmp_path / 'index' / 'simple'}\n")
    environ = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_DIRS": str(tmp_path / "none"),
        "PIP_FIND_LINKS": f"{find_links} {tmp_path / 'missing'}",
        "PIP_CONFIG_FILE": str(config),
    }
    dirs = host_wheel_dirs(environ)
    assert find_links.resolve() in dirs
    assert files.resolve() in dirs
    assert (tmp_path / "missing") not in dirs


def test_from_host_takes_the_pip_cert_and_local_torch(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    cert = tmp_path / "bundle.pem"
    cert.write_text("CERT")
    wheel = make_wheel(tmp_path / "w", "torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl", [])
    spec = ImageSpec.from_host(
        "2.13.0", source_root=root, wheel_dirs=[tmp_path / "w"], environ={"PIP_CERT": str(cert)}
    )
    assert spec.ca_bundle == cert and spec.wheels == (wheel,)
    names = [arcname for arcname, _ in spec.context_files()]
    assert "certs/pip-cert.pem" in names and f"wheels/{wheel.name}" in names
    assert {"Dockerfile", "pyproject.toml", "runner/compilegate/cli.py"} <= set(names)


# --- ensure_image with a fake engine -------------------------------------------------------


class FakeImage:
    def __init__(
        self,
        image_id: str,
        labels: dict[str, str] | None = None,
        size: int = 123,
        used: str = "2026-12-01T10:00:00.123456789Z",
    ) -> None:
        self.id = image_id
        self.labels = labels or {}
        created = "2026-11-01T10:00:00.5Z"
        self.attrs: dict[str, Any] = {
            "Size": size, "Created": created, "Metadata": {"LastTagTime": used},
        }  # fmt: skip
        self.tags: list[str] = []


class FakeImages:
    """The engine's images by tag; `in_use` tags refuse removal as the engine does (409)."""

    def __init__(self, present: dict[str, FakeImage], in_use: frozenset[str] = frozenset()) -> None:
        self.present = present
        self.in_use = in_use
        self.removed: list[str] = []
        self.pruned: list[dict[str, Any]] = []

    def get(self, name: str) -> FakeImage:
        from docker.errors import ImageNotFound

        if name not in self.present:
            raise ImageNotFound(name)
        return self.present[name]

    def list(self, name: str, filters: dict[str, str]) -> list[FakeImage]:
        images: dict[str, FakeImage] = {}
        for tag, image in self.present.items():
            image.tags = [t for t, i in self.present.items() if i is image]
            if tag.split(":")[0] == name and filters["label"] in image.labels:
                images[image.id] = image
        return list(images.values())

    def remove(self, tag: str) -> None:
        from docker.errors import APIError

        if tag in self.in_use:
            raise APIError("409 Conflict", explanation="image is being used by a container")
        del self.present[tag]
        self.removed.append(tag)

    def prune(self, filters: dict[str, Any]) -> dict[str, Any]:
        self.pruned.append(filters)
        return {"SpaceReclaimed": 0}


class FakeApi:
    def __init__(self, client: FakeClient, chunks: list[dict[str, Any]]) -> None:
        self.client, self.chunks, self.calls = client, chunks, []
        self.tagged: list[tuple[str, str, str]] = []

    def containers(self, all: bool) -> list[dict[str, str]]:
        images = self.client.images
        return [{"ImageID": images.present[tag].id} for tag in images.in_use]

    def tag(self, image_id: str, repository: str, tag: str) -> None:
        self.tagged.append((image_id, repository, tag))

    def build(self, **kwargs: Any):
        self.calls.append(kwargs)
        self.context_files = sorted(
            p.relative_to(kwargs["path"]).as_posix()
            for p in Path(kwargs["path"]).rglob("*")
            if p.is_file()
        )
        yield from self.chunks
        if not any("error" in c for c in self.chunks):
            self.client.images.present[kwargs["tag"]] = FakeImage("sha256:new")


class FakeClient:
    def __init__(self, chunks: list[dict[str, Any]], present: dict[str, FakeImage]) -> None:
        self.images = FakeImages(present)
        self.api = FakeApi(self, chunks)


def test_ensure_image_builds_on_the_engines_default_network_then_reuses(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    cert = tmp_path / "bundle.pem"
    cert.write_text("CERT")
    spec = ImageSpec("2.13.0", root, base_image="base:1", ca_bundle=cert, requirements=b"six\n")
    client = FakeClient([{"stream": "Step 1/2 : FROM base:1\n"}], {"base:1": FakeImage("b")})
    lines: list[str] = []
    built = ensure_image(client, spec, log=lines.append)
    assert not built.reused
    (call,) = client.api.calls
    assert call["network_mode"] is None  # the engine's default: not the host's localhost
    assert call["buildargs"]["TORCH_VERSION"] == "2.13.0"
    assert call["buildargs"]["REQUIREMENTS_SOURCE_BUILDS"] == "0"  # wheels only
    assert "requirements/requirements.txt" in client.api.context_files
    assert call["buildargs"]["BASE_IMAGE"] == "base:1"
    assert call["labels"]["compilegate.torch-version"] == "2.13.0"
    assert "certs/pip-cert.pem" in client.api.context_files
    assert "[torch 2.13.0] Step 1/2 : FROM base:1" in lines

    again = ensure_image(client, spec, log=lines.append)
    assert again.reused and again.tag == built.tag and len(client.api.calls) == 1
    ensure_image(client, spec, rebuild=True, log=lines.append, build_network="host")
    assert len(client.api.calls) == 2 and client.api.calls[1]["network_mode"] == "host"


def test_build_failure_carries_the_log_tail(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    chunks = [
        {"stream": "ERROR: No matching distribution found for torch==0.0.0\n"},
        {"error": "The command '/bin/bash -o pipefail -c ...' returned a non-zero code: 1"},
    ]
    client = FakeClient(chunks, {})
    with pytest.raises(EnvironmentBuildError) as caught:
        ensure_image(client, ImageSpec("0.0.0", root), log=lambda _: None)
    assert caught.value.torch_version == "0.0.0"
    assert any("No matching distribution" in line for line in caught.value.log_tail)
    assert str(caught.value).startswith("torch 0.0.0: image build failed")
    assert caught.value.exit_code == 3


def ours(image_id: str, sources: str, size: int = 10**9) -> FakeImage:
    labels = {"compilegate.inputs-sha256": "x" * 64, "compilegate.sources-sha256": sources}
    return FakeImage(image_id, labels, size)


def test_a_build_first_removes_the_images_an_earlier_compilegate_built(tmp_path: Path) -> None:
    """A runner that updates compilegate would keep every earlier image (1.5 GB a CPU torch,
    6 GB a CUDA one): a build removes them, and only them."""
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root, base_image="base:1")
    now = sources_digest(spec)
    present = {
        "base:1": FakeImage("b"),
        "compilegate-torch:2.13.0-aaaaaaaaaaaa": ours("old-cpu", "0" * 64),
        "compilegate-torch:2.14.1-bbbbbbbbbbbb": ours("old-cuda", "1" * 64, 6 * 10**9),
        "compilegate-torch:2.12.0-cccccccccccc": FakeImage(  # before the sources label
            "older", {"compilegate.inputs-sha256": "y" * 64}
        ),
        "compilegate-torch:2.13.0-dddddddddddd": ours("same-sources", now),  # other requirements
        "compilegate-torch:2.13.0": FakeImage("by-hand"),  # built from the Dockerfile by hand
        "compilegate-torch:2.11.0-eeeeeeeeeeee": ours("running", "2" * 64),
    }
    client = FakeClient([{"stream": "Step 1/1\n"}], present)
    client.images.in_use = frozenset({"compilegate-torch:2.11.0-eeeeeeeeeeee"})
    lines: list[str] = []
    built = ensure_image(client, spec, log=lines.append)

    assert sorted(client.images.removed) == [
        "compilegate-torch:2.12.0-cccccccccccc",
        "compilegate-torch:2.13.0-aaaaaaaaaaaa",
        "compilegate-torch:2.14.1-bbbbbbbbbbbb",
    ]
    assert set(present) == {
        "base:1",
        "compilegate-torch:2.13.0-dddddddddddd",
        "compilegate-torch:2.13.0",
        "compilegate-torch:2.11.0-eeeeeeeeeeee",
        built.tag,
    }
    assert client.api.calls[0]["labels"]["compilegate.sources-sha256"] == now
    assert (
        "[torch 2.13.0] removed compilegate-torch:2.14.1-bbbbbbbbbbbb, built by another "
        "compilegate (6.0 GB)" in lines
    )
    assert any(
        line.startswith("[torch 2.13.0] kept compilegate-torch:2.11.0-eeeeeeeeeeee")
        and "used by a container" in line
        for line in lines
    )
    assert lines.index(next(x for x in lines if "removed" in x)) < lines.index(
        next(x for x in lines if "building image" in x)
    )  # before the build, which needs the room


def test_keep_superseded_and_a_reused_image_remove_nothing(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root, base_image="base:1")
    old = "compilegate-torch:2.13.0-aaaaaaaaaaaa"
    client = FakeClient([], {"base:1": FakeImage("b"), old: ours("old", "0" * 64)})
    built = ensure_image(client, spec, keep_superseded=True, log=lambda _: None)
    assert client.images.removed == [] and old in client.images.present
    ensure_image(client, spec, log=lambda _: None)  # reused: nothing built, nothing removed
    assert built.tag in client.images.present and client.images.removed == []


def test_the_sources_digest_ignores_all_but_compilegates_own_files(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root)
    first = sources_digest(spec)
    other = dataclasses.replace(spec, torch_version="2.14.1", requirements=b"six\n")
    assert sources_digest(other) == first
    (root / "runner/compilegate/cli.py").write_text("print(2)\n")
    assert sources_digest(spec) != first


def test_requirements_name_the_image_by_what_pip_reads(tmp_path: Path) -> None:
    """Issue 51: a push that changes only a comment, a blank line, surrounding blanks or the
    order of the requirement lines builds no new image; a changed requirement or option does."""
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root, requirements=b"six\nattrs>=22\n")
    first = digest(spec)

    def same(requirements: bytes) -> None:
        assert digest(dataclasses.replace(spec, requirements=requirements)) == first, requirements

    same(b"# our dependencies\nsix\nattrs>=22\n")
    same(b"\n\n  six   \n\tattrs>=22  # at least 22\n\n")
    same(b"attrs>=22\nsix\n")
    same(b"att\\\nrs>=22\nsix # a comment ending in a backslash \\\n")  # pip's joining
    assert digest(dataclasses.replace(spec, requirements=b"# nothing\n\n")) == digest(
        dataclasses.replace(spec, requirements=None)
    )
    seen = {first}
    for other in (
        b"six\nattrs>=23\n",
        b"six\nattrs>=22\nrequests\n",
        b"--extra-index-url file:///a\nsix\nattrs>=22\n",
        b"--extra-index-url file:///b\nsix\nattrs>=22\n",
        b"six#egg\nattrs>=22\n",  # `#` after no blank is not a comment, for pip
    ):
        new = digest(dataclasses.replace(spec, requirements=other))
        assert new not in seen, other
        seen.add(new)


def test_pip_options_keep_their_order_requirements_are_sorted() -> None:
    text = b"--index-url file:///x\nzope\n# c\n--extra-index-url file:///y\nattrs \\\n  >=1\n"
    assert normalized_requirements(text) == (
        "--index-url file:///x\n--extra-index-url file:///y\nattrs   >=1\nzope\n"
    )


def test_a_reused_image_is_marked_used_and_a_build_removes_its_stage(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root, base_image="base:1")
    client = FakeClient([{"stream": "Step 1/1\n"}], {"base:1": FakeImage("b")})
    built = ensure_image(client, spec, log=lambda _: None)
    (call,) = client.api.calls
    inputs = call["labels"]["compilegate.inputs-sha256"]
    assert call["buildargs"]["COMPILEGATE_BUILD_STAGE"] == inputs
    assert client.images.pruned == [
        {"dangling": True, "label": f"compilegate.build-stage={inputs}"}
    ]
    assert client.api.tagged == []
    again = ensure_image(client, spec, log=lambda _: None)
    assert again.reused
    assert client.api.tagged == [("sha256:new", *built.tag.split(":"))]


def test_a_build_keeps_the_most_recently_used_images_of_its_version(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    spec = ImageSpec("2.13.0", root, base_image="base:1", requirements=b"six\n")
    now = sources_digest(spec)

    def same_sources(image_id: str, version: str, used: str) -> FakeImage:
        labels = {
            "compilegate.inputs-sha256": "x" * 64,
            "compilegate.sources-sha256": now,
            "compilegate.torch-version": version,
        }
        return FakeImage(image_id, labels, used=used)

    present = {
        "base:1": FakeImage("b"),
        "compilegate-torch:2.13.0-aaaaaaaaaaaa": same_sources(
            "a", "2.13.0", "2026-12-03T00:00:00Z"
        ),
        "compilegate-torch:2.13.0-bbbbbbbbbbbb": same_sources(
            "b", "2.13.0", "2026-12-01T00:00:00Z"
        ),
        "compilegate-torch:2.13.0-cccccccccccc": same_sources(
            "c", "2.13.0", "2026-12-02T00:00:00Z"
        ),
        "compilegate-torch:2.14.1-dddddddddddd": same_sources(
            "d", "2.14.1", "2026-11-01T00:00:00Z"
        ),
        "compilegate-torch:2.14.1-eeeeeeeeeeee": same_sources(
            "e", "2.14.1", "2026-11-02T00:00:00Z"
        ),
    }
    client = FakeClient([{"stream": "Step 1/1\n"}], present)
    lines: list[str] = []
    built = ensure_image(client, spec, log=lines.append, keep_images=2)
    # Room for the new one: 2.13.0 keeps its most recently used; 2.14.1 is not this build's.
    assert client.images.removed == [
        "compilegate-torch:2.13.0-bbbbbbbbbbbb",
        "compilegate-torch:2.13.0-cccccccccccc",
    ]
    assert {t for t in present if t.startswith("compilegate-torch:2.13.0")} == {
        "compilegate-torch:2.13.0-aaaaaaaaaaaa",
        built.tag,
    }
    assert any("least recently used image of torch 2.13.0" in line for line in lines), lines
