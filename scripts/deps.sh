#!/usr/bin/env bash
# Installs what hookset's build needs on Debian 12, if missing. Used by scripts/test.sh and
# scripts/main.sh (which calls hookset_main_deps: the same, plus what only the main job uses);
# `bash scripts/deps.sh [extra-package...]` also works on its own.
# Quick when everything is installed (no apt-get at all); skips apt when not root (and no sudo).
set -uo pipefail

hookset_deps() {
  local packages=(g++ clang cmake ninja-build pkg-config python3
                  libboost1.81-dev catch2 libbenchmark-dev libsigc++-3.0-dev clang-format-14 "$@")
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "[deps] all present: ${packages[*]}"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "[deps] no apt-get; please install: ${missing[*]}" >&2
    return 0
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      echo "[deps] not root: skipping apt; missing: ${missing[*]}" >&2
      return 0
    fi
  fi
  echo "[deps] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q || echo "[deps] apt-get update failed; trying the install anyway" >&2
  if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    echo "[deps] apt-get install failed; the build will say what is missing" >&2
  fi
  return 0
}

# The main job's packages: the build's, plus matplotlib for benchmarks/plot.py (the picture in
# docs/performance.md). The test command does not draw, so it does not install it.
hookset_main_deps() {
  hookset_deps python3-matplotlib "$@"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  hookset_deps "$@"
fi
