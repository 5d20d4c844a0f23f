#!/usr/bin/env bash
# The providers a change touches, for pull request review: reads the changed paths (one a line,
# relative to the repository root, as `git diff --name-only` prints them) on stdin and prints,
# sorted, each provider whose overlay's build reads one of them, as `peerpods-build affected`
# answers from what the build reads (an overlay the change removes counts too). A change to the
# program itself (src/, Cargo.toml, Cargo.lock) touches every provider.
# Usage: tools/touched-providers.sh [ROOT] < changed-paths   (ROOT: default this repository)
# The program: $PEERPODS_BUILD, else target/release/peerpods-build of this repository, else on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root=${1:-"$here"}
program=${PEERPODS_BUILD:-"$here/target/release/peerpods-build"}
[ -x "$program" ] || program=peerpods-build

changed=$(cat)
cd "$root"
folders=()
for dir in overlays/*/; do
  if [ -f "$dir/kustomization.yaml" ] || [ -f "$dir/kustomization.yml" ] || [ -f "$dir/Kustomization" ]; then
    folders+=("${dir%/}")
  fi
done
# An overlay the change removed: affected when a change lies in it.
while IFS= read -r path; do
  case "$path" in
    overlays/*/*) dir=${path#overlays/}; dir="overlays/${dir%%/*}"; [ -d "$dir" ] || folders+=("$dir") ;;
  esac
done <<< "$changed"

{
  if grep -qE '^(src/|Cargo\.toml$|Cargo\.lock$)' <<< "$changed"; then
    printf '%s\n' "${folders[@]}"
  elif [ ${#folders[@]} -gt 0 ] && [ -n "$changed" ]; then
    printf '%s\n' "$changed" | "$program" affected --changed - "${folders[@]}"
  fi
} | sed 's|^overlays/||' | LC_ALL=C sort -u
