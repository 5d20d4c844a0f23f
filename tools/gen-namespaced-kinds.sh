#!/bin/sh
# Regenerates src/resource/namespaced_kinds.tsv from kustomize's table of namespaced kinds
# (shipped beside the Kubernetes OpenAPI schema kustomize uses). Usage: tools/gen-namespaced-kinds.sh SCHEMA_DIR
set -eu
tail -n +2 "$1/namespaced-kinds.tsv" | awk -F'\t' '{print $1"\t"$2"\t"$3}' > "$(dirname "$0")/../src/resource/namespaced_kinds.tsv"
