#!/usr/bin/env bash
# Runs ../shared/tools/conformance.py over the shared suites with the release binary and prints its
# summary. Cases whose (empty) files/ folder was not kept get an empty one, in a scratch copy.
# Usage: tools/conformance.sh [extra conformance.py args...]; SHARED=path overrides ../shared.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${SHARED:-$here/../shared}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -r "$shared/conformance" "$scratch/conformance"
mkdir -p "$scratch/realworld" && cp -r "$shared/realworld/cases" "$scratch/realworld/cases"
chmod -R u+w "$scratch"
find "$scratch" -name case.json -execdir mkdir -p files \;
python3 "$shared/tools/conformance.py" --cmd "$here/target/release/peerpods-build build {dir} {flags}" \
  "$@" "$scratch/conformance" "$scratch/realworld/cases"
