#!/usr/bin/env bash
# Make a Docker engine and the local base image `compilegate-base:bookworm` available, for the
# container tests (tests/integration/containers) on a fresh machine. Idempotent and fast when
# everything is already there; says what it did.
#
#   1. docker.io, tini (docker-init) and debootstrap from the distribution's packages, if
#      missing;
#   2. dockerd started (no bridge, no iptables: builds use the host network, runs use none),
#      if `docker info` does not answer, then waits until it does;
#   3. the base image built once with debootstrap (minbase, Debian bookworm: its python3 is
#      3.11, the tag of the CPU torch wheel on disk) from the APT mirror this machine already
#      uses, and imported; the root filesystem tarball is cached under
#      ~/.cache/compilegate/base/ so a new engine re-imports it without debootstrap.
#
# Environment: COMPILEGATE_BASE_IMAGE (default compilegate-base:bookworm),
# COMPILEGATE_CACHE (default ~/.cache/compilegate), DEBIAN_MIRROR (default: read from
# /etc/apt/sources.list*), DOCKERD_LOG (default /var/log/compilegate-dockerd.log).
set -euo pipefail

BASE_IMAGE="${COMPILEGATE_BASE_IMAGE:-compilegate-base:bookworm}"
SUITE=bookworm
CACHE_DIR="${COMPILEGATE_CACHE:-$HOME/.cache/compilegate}/base"
TARBALL="$CACHE_DIR/$SUITE-minbase.tar"
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/compilegate-dockerd.log}"

say() { printf 'docker-setup: %s\n' "$*"; }
die() { printf 'docker-setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

install_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  # docker-init (`docker run --init`, which the Docker backend uses) comes from tini.
  command -v docker-init >/dev/null 2>&1 || missing+=(tini)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  if [ "${#missing[@]}" -eq 0 ]; then
    say "packages: dockerd, docker-init and debootstrap already installed"
    return
  fi
  say "packages: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

start_engine() {
  if docker info >/dev/null 2>&1; then
    say "engine: already running ($(docker version --format '{{.Server.Version}}'))"
    return
  fi
  say "engine: starting dockerd (log: $DOCKERD_LOG)"
  # A daemon killed without a chance to clean up (a CI run ends whatever its session left
  # running) leaves pid files that make the next dockerd refuse to start.
  local pidfile
  for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
    if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null; then
      say "engine: removing stale $pidfile"
      as_root rm -f "$pidfile"
    fi
  done
  # setsid + nohup: the daemon outlives this script and the shell that called it; started
  # directly (not through a shell function) so no shell lingers as its parent.
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  "${sudo[@]}" setsid nohup dockerd --bridge=none --iptables=false >"$DOCKERD_LOG" 2>&1 </dev/null &
  local waited=0
  until docker info >/dev/null 2>&1; do
    if [ "$waited" -ge 60 ]; then
      tail -n 20 "$DOCKERD_LOG" >&2 || true
      die "dockerd did not answer within 60 s"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  say "engine: ready after ${waited} s ($(docker version --format '{{.Server.Version}}'))"
}

# The first APT source of the main Debian archive (not -security, not -updates), in either
# the one-line or the deb822 format: the mirror this machine can already reach.
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "$DEBIAN_MIRROR"
    return
  fi
  local files=()
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ "${#files[@]}" -gt 0 ] || return 0
  awk -v suite="$SUITE" '
    # one-line format: deb [options] URI suite components
    $1 == "deb" {
      for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) break
      if ($(i + 1) == suite && $i ~ /\/debian\/?$/) { print $i; exit }
    }
    # deb822 format: a stanza with URIs: and Suites: lines
    /^URIs:/   { uri = $2 }
    /^Suites:/ { for (j = 2; j <= NF; j++) if ($j == suite && uri ~ /\/debian\/?$/) { print uri; exit } }
    /^$/       { uri = "" }
  ' "${files[@]}"
}

build_base_image() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    say "base image: $BASE_IMAGE already present"
    return
  fi
  mkdir -p "$CACHE_DIR"
  if [ ! -s "$TARBALL" ]; then
    local mirror
    mirror="$(debian_mirror)"
    [ -n "$mirror" ] || die "no Debian $SUITE mirror in /etc/apt/sources.list*; set DEBIAN_MIRROR"
    local rootfs
    rootfs="$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")"
    # shellcheck disable=SC2064  # expand now: the folder to remove is this one
    trap "as_root rm -rf '$rootfs'" EXIT
    say "base image: debootstrap --variant=minbase $SUITE from $mirror"
    local started=$SECONDS
    as_root debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$CACHE_DIR/debootstrap.log" 2>&1 \
      || { tail -n 20 "$CACHE_DIR/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE_DIR/debootstrap.log)"; }
    # The image's own apt-get update fetches fresh lists; keep the tarball small.
    as_root rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    as_root tar -C "$rootfs" -cf "$TARBALL.partial" .
    mv "$TARBALL.partial" "$TARBALL"
    as_root rm -rf "$rootfs"
    trap - EXIT
    say "base image: root filesystem cached in $TARBALL after $((SECONDS - started)) s"
  else
    say "base image: using cached root filesystem $TARBALL"
  fi
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' \
    --message "debootstrap --variant=minbase $SUITE" \
    "$TARBALL" "$BASE_IMAGE" >/dev/null
  say "base image: imported $BASE_IMAGE ($(docker image inspect --format '{{.Size}}' "$BASE_IMAGE") bytes)"
}

install_packages
start_engine
build_base_image
