#!/usr/bin/env bash
# Make a headless Chromium available for the browser test of the PR comment
# (tests/browser: the comment rendered at 780 px with GitHub's stylesheet). Idempotent: does
# nothing when chromium, chromium-browser or google-chrome is already on PATH (GitHub's
# ubuntu runners ship google-chrome); otherwise installs Debian's `chromium` package and an
# emoji font for the screenshots (as root, or with sudo -n). Exits non-zero when it could not;
# the Makefile decides whether that fails the run (REQUIRE_BROWSER=1) or only skips, loudly,
# the browser tests.
set -euo pipefail

say() { printf 'browser-setup: %s\n' "$*"; }

for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then
    say "found $name"
    exit 0
  fi
done

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

if ! command -v apt-get >/dev/null 2>&1; then
  say "no Chromium and no apt-get: install Chromium yourself for the browser tests"
  exit 1
fi
say "installing chromium (apt-get install -y chromium fonts-noto-color-emoji)"
if as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji \
    >/dev/null; then
  say "installed $(command -v chromium)"
else
  say "could not install chromium (needs root or sudo)"
  exit 1
fi
