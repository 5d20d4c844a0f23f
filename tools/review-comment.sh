#!/usr/bin/env bash
# The pull request comment of the provider review: what a change does to the rendering of each
# provider it touches, as `peerpods-build diff --base REV` prints it, in Markdown on stdout.
# Usage: tools/review-comment.sh PEERPODS_BUILD REV PROVIDER...
# Exits 0 with the comment printed (also when nothing changed), 2 when a rendering fails.
set -euo pipefail
binary=$1 rev=$2
shift 2
dirs=()
for provider in "$@"; do dirs+=("overlays/$provider"); done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "### Rendering changes"
  echo
  echo "The change touches no provider."
  exit 0
fi

status=0
stat=$("$binary" diff --base "$rev" --stat "${dirs[@]}") || status=$?
if [ "$status" -gt 1 ]; then exit 2; fi
echo "### Rendering changes: $*"
echo
if [ "$status" -eq 0 ]; then
  echo "No rendered resource changes against \`$rev\`."
  exit 0
fi
full=$("$binary" diff --base "$rev" "${dirs[@]}") || true
explained=$("$binary" diff --base "$rev" --stat --explain "${dirs[@]}") || true
echo "\`peerpods-build diff --base $rev --stat\`:"
echo
echo '```'
echo "$stat"
echo '```'
echo
# Which file (line:column, and the kustomization step) set each differing field, on each side.
echo "What set each difference (\`peerpods-build diff --base $rev --stat --explain\`):"
echo
echo "| provider | resource | field | \`$rev\` | this change |"
echo '| --- | --- | --- | --- | --- |'
rows=0
while IFS=$'\t' read -r dir change resource field old new; do
  rows=$((rows + 1))
  if [ "$rows" -gt 200 ]; then
    echo "| ... | (cut; run the command above for every field) | | | |"
    break
  fi
  echo "| ${dir#overlays/} | $change $resource | \`$field\` | $old | $new |"
done <<< "$explained"
echo
echo '<details><summary>Unified diff of each changed resource</summary>'
echo
echo '```diff'
# A comment holds at most 65536 characters.
if [ ${#full} -gt 50000 ]; then
  echo "${full:0:50000}"
  echo "... (cut; run the command above for the whole diff)"
else
  echo "$full"
fi
echo '```'
echo
echo '</details>'
