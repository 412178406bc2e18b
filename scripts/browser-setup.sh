#!/usr/bin/env bash
# Make a headless Chromium and Mermaid's bundle available for the browser tests of the PR
# comment (tests/browser: the comment rendered at 780 px with GitHub's stylesheet, and its
# trend charts drawn by Mermaid). Idempotent.
# - Chromium: nothing to do when chromium, chromium-browser or google-chrome is on PATH
#   (GitHub's ubuntu runners ship google-chrome); otherwise installs Debian's `chromium`
#   package and an emoji font for the screenshots (as root, or with sudo -n).
# - Mermaid: the versions tests/browser/render_mermaid.py names, each package's tarball from
#   the npm registry (`npm pack`, no dependencies: dist/mermaid.min.js is self-contained),
#   unpacked into ~/.cache/compilegate/mermaid/<version>/ (COMPILEGATE_MERMAID_DIR).
# Exits non-zero when either could not be had; the Makefile decides whether that fails the
# run (REQUIRE_BROWSER=1) or only skips, loudly, the browser tests.
set -euo pipefail

say() { printf 'browser-setup: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

chromium_ready() {
  local name
  for name in chromium chromium-browser google-chrome; do
    if command -v "$name" >/dev/null 2>&1; then
      say "found $name"
      return 0
    fi
  done
  if ! command -v apt-get >/dev/null 2>&1; then
    say "no Chromium and no apt-get: install Chromium yourself for the browser tests"
    return 1
  fi
  say "installing chromium (apt-get install -y chromium fonts-noto-color-emoji)"
  if as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji \
      >/dev/null; then
    say "installed $(command -v chromium)"
  else
    say "could not install chromium (needs root or sudo)"
    return 1
  fi
}

mermaid_ready() {
  local here versions version cache target
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  versions="$(sed -n 's/^MERMAID_VERSIONS = (\(.*\))$/\1/p' "$here/tests/browser/render_mermaid.py" | tr -d '",')"
  cache="${COMPILEGATE_MERMAID_DIR:-$HOME/.cache/compilegate/mermaid}"
  if [ -z "$versions" ]; then
    say "no MERMAID_VERSIONS in tests/browser/render_mermaid.py"
    return 1
  fi
  for version in $versions; do
    target="$cache/$version"
    if [ -f "$target/package/dist/mermaid.min.js" ]; then
      say "found mermaid $version"
      continue
    fi
    if ! command -v npm >/dev/null 2>&1; then
      say "no npm: cannot fetch mermaid $version"
      return 1
    fi
    mkdir -p "$target"
    if (cd "$target" && npm pack --silent "mermaid@$version" >/dev/null &&
      tar -xzf "mermaid-$version.tgz" package/dist/mermaid.min.js && rm "mermaid-$version.tgz"); then
      say "fetched mermaid $version"
    else
      say "could not fetch mermaid $version (npm pack)"
      return 1
    fi
  done
}

status=0
chromium_ready || status=1
mermaid_ready || status=1
exit "$status"
