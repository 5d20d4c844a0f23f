#!/usr/bin/env bash
# Runs ../shared/tools/conformance.py over every shared suite (conformance: krusty, krusty-v5.8.1 and
# regressions; realworld/cases; realworld/public) with the release binary and prints its summary.
# Cases whose (empty) files/ folder was not kept get an empty one, in a scratch copy.
# Usage: tools/conformance.sh [extra conformance.py args...]; SHARED=path overrides ../shared;
# the binary is looked for in $CARGO_TARGET_DIR (default target/). CONFORMANCE_CMD replaces the command
# template (for example "$(tools/go-clients.sh path kustomize) build {dir} {flags}" for another kustomize).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${SHARED:-$here/../shared}"
binary="${CARGO_TARGET_DIR:-$here/target}/release/peerpods-build"
case "$binary" in /*) ;; *) binary="$here/$binary" ;; esac
if [ -z "${CONFORMANCE_CMD:-}" ] && [ ! -x "$binary" ]; then
  echo "conformance.sh: no release binary at $binary (run cargo build --release)" >&2
  exit 2
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
suites=(conformance realworld/cases realworld/public)
for suite in "${suites[@]}"; do
  if [ ! -d "$shared/$suite" ]; then
    echo "conformance.sh: $shared/$suite not found" >&2
    exit 2
  fi
  mkdir -p "$scratch/$(dirname "$suite")"
  cp -r "$shared/$suite" "$scratch/$suite"
done
chmod -R u+w "$scratch"
find "$scratch" -name case.json -execdir mkdir -p files \;
command="${CONFORMANCE_CMD:-}"
[ -n "$command" ] || command="$binary build {dir} {flags}"
python3 "$shared/tools/conformance.py" --cmd "$command" \
  "$@" "${suites[@]/#/$scratch/}"
