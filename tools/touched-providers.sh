#!/usr/bin/env bash
# The providers a change touches, for pull request review: reads the changed paths (one a line,
# relative to the repository root, as `git diff --name-only` prints them) on stdin and prints
# each touched provider once, sorted.
#   overlays/<provider>/...                      -> that provider (also one the change removes)
#   base/, components/, src/, Cargo.toml, Cargo.lock -> every provider of ROOT/overlays
#   anything else                                -> no provider
# Usage: tools/touched-providers.sh [ROOT] < changed-paths   (ROOT: default this repository)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}

every_provider() {
  local dir
  for dir in "$root"/overlays/*/; do
    if [ -f "$dir/kustomization.yaml" ] || [ -f "$dir/kustomization.yml" ] || [ -f "$dir/Kustomization" ]; then
      basename "$dir"
    fi
  done
}

while IFS= read -r path || [ -n "$path" ]; do
  case "$path" in
    overlays/*/*) path=${path#overlays/}; echo "${path%%/*}" ;;
    base/* | components/* | src/* | Cargo.toml | Cargo.lock) every_provider ;;
  esac
done | LC_ALL=C sort -u
