"""What a runner's Docker disk does over a series of pushes: the image step of `compilegate
matrix --backend docker --requirements FILE` (DockerBackend.prepare), once per push, each
push changing the requirements file.

    --change comment       only a comment changes (`# push N`): the same install each time
    --change requirement   a real requirement changes each push (`six` at another version)

Before the first push and after each one it prints `docker system df`'s image figure, the
number of compilegate-torch images and of untagged (dangling) images, and the push's seconds.
The real Dockerfile, the local CPU torch wheel (the host's pip folders), the local base image
`compilegate-base:bookworm` (scripts/docker-setup.sh), the build on `--build-network`.
Images of other compilegate sources are left alone (keep_superseded: other trees on the same
engine keep theirs). The engine is shared: another process's builds or prunes show in `docker
system df` too, so the compilegate counts are printed beside it.

Run: `PYTHONPATH=runner python bench/image_pushes.py --pushes 10 --change comment`;
`--runner DIR` names another tree's root (the code before the fix: `git worktree add /tmp/old
5a5d0e2`, then `--runner /tmp/old`): its runner/ is imported and its Dockerfile built.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
SIX_VERSIONS = ("1.17.0", "1.16.0", "1.15.0", "1.14.0", "1.13.0", "1.12.0")


def system_df_images() -> str:
    done = subprocess.run(
        ["docker", "system", "df", "--format", "{{json .}}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if row.get("Type") == "Images":
            return f"{row['Size']} ({row['TotalCount']} images)"
    return "?"


def engine_counts(client: Any) -> tuple[int, int]:
    ours = client.images.list(name="compilegate-torch")
    dangling = client.images.list(filters={"dangling": True})
    return len(ours), len(dangling)


def requirements_for(push: int, change: str) -> bytes:
    if change == "comment":
        return f"# our dependencies (push {push})\nsix\n".encode()
    return f"six=={SIX_VERSIONS[push % len(SIX_VERSIONS)]}\n".encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--change", choices=("comment", "requirement"), default="comment")
    parser.add_argument("--runner", type=Path, default=REPO_ROOT, help="the tree to build")
    parser.add_argument("--torch", default="2.13.0")
    parser.add_argument("--base-image", default="compilegate-base:bookworm")
    parser.add_argument("--build-network", default="host")
    args = parser.parse_args()
    root = args.runner.resolve()
    sys.path.insert(0, str(root / "runner"))
    import docker

    from compilegate.containers.docker_backend import DockerBackend

    client = docker.from_env(timeout=900)
    print(f"tree {root}: before  docker system df images {system_df_images()}; "
          "compilegate-torch %d, dangling %d" % engine_counts(client), flush=True)  # fmt: skip
    for push in range(1, args.pushes + 1):
        backend = DockerBackend(
            client,
            source_root=root,
            base_image=args.base_image,
            requirements=requirements_for(push, args.change),
            build_network=args.build_network,
            keep_superseded=True,
            log=lambda _line: None,
        )
        started = time.perf_counter()
        for attempt in range(3):  # a shared engine: another process's prune can break a build
            try:
                tag = backend.prepare(args.torch)
                break
            except Exception as exc:
                print(f"push {push}: attempt {attempt + 1} failed: {exc}", flush=True)
        else:
            return 1
        took_s = time.perf_counter() - started
        ours, dangling = engine_counts(client)
        print(
            f"push {push:2d} ({args.change}): {tag} in {took_s:5.1f} s; docker system df "
            f"images {system_df_images()}; compilegate-torch {ours}, dangling {dangling}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
