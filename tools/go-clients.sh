#!/usr/bin/env bash
# Builds, from their Go modules, the real clients the `client_` tests drive, each pinned by version
# and kept in the user's cache folder (tools/go-env.sh); a program already built is not built again.
#
#   tools/go-clients.sh            build every client (the first run takes minutes; docs/clients.md)
#   tools/go-clients.sh build NAME build one client
#   tools/go-clients.sh path NAME  print where the client's program is (built or not)
#   tools/go-clients.sh list       print each client's name, version and program
#
# Clients: helm4, helm3, kustomize (the newest release), kustomize-5.8.2, flux-build (tools/flux-build,
# over github.com/fluxcd/pkg/kustomize). kustomize v5.8.3 needs Go 1.27: go-env.sh sets GOTOOLCHAIN,
# and the go command fetches that toolchain from the module proxy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/go-env.sh
source "$here/go-env.sh"
# go-env.sh sets it too; kept here so that this script says which Go it builds with.
export GOTOOLCHAIN=go1.27.3

clients="helm4 helm3 kustomize kustomize-5.8.2 flux-build"

# name -> "package version program-name [module=version it must be built with]"
# kustomize v5.8.3 requires k8s.io/kube-openapi v0.0.0-20261001230523-97fa35140926, which the module
# proxy refuses ("403 Forbidden: This module version is not available"): it is built with v5.8.2's
# kube-openapi instead (docs/clients.md).
client_spec() {
  case "$1" in
    helm4) echo "helm.sh/helm/v4/cmd/helm v4.3.2 helm" ;;
    helm3) echo "helm.sh/helm/v3/cmd/helm v3.21.4 helm" ;;
    kustomize) echo "sigs.k8s.io/kustomize/kustomize/v5 v5.8.3 kustomize k8s.io/kube-openapi=v0.0.0-20260721132016-d427ff9ee9ad" ;;
    kustomize-5.8.2) echo "sigs.k8s.io/kustomize/kustomize/v5 v5.8.2 kustomize" ;;
    flux-build) echo "./tools/flux-build $(flux_build_version) flux-build" ;;
    *) echo "unknown client '$1' (known: $clients)" >&2; return 2 ;;
  esac
}

# Our own program is keyed by its sources, so an edit builds it again.
flux_build_version() {
  cat "$here/flux-build/go.mod" "$here/flux-build/go.sum" "$here/flux-build/main.go" | sha256sum | cut -c1-16
}

client_path() {
  local spec package version program
  spec=$(client_spec "$1") || return
  read -r package version program _ <<<"$spec"
  echo "$peerpods_go_bin/$1-$version/$program"
}

# -ldflags as helm's Makefile sets them for a release: the version `helm version` prints, and (helm 3)
# the Kubernetes version `helm template` assumes, one minor above the client-go it is built with.
helm_ldflags() {
  local major=$1 version=$2 client_go minor
  local flags="-s -w -X helm.sh/helm/v$major/internal/version.version=$version"
  flags+=" -X helm.sh/helm/v$major/internal/version.gitTreeState=clean"
  if [ "$major" = 3 ]; then
    client_go=$(go mod download -json "helm.sh/helm/v3@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
    minor=$(sed -n 's/^\tk8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$client_go")
    flags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
    flags+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
  fi
  echo "$flags"
}

build_client() {
  local name=$1 spec package version program replace target dir ldflags=""
  spec=$(client_spec "$name") || return
  read -r package version program replace <<<"$spec"
  target=$(client_path "$name")
  if [ -x "$target" ]; then
    echo "$name $version: built ($target)"
    return
  fi
  dir=$(dirname "$target")
  mkdir -p "$dir.tmp"
  echo "$name $version: building $package ..."
  case "$name" in
    helm4) ldflags=$(helm_ldflags 4 "$version") ;;
    helm3) ldflags=$(helm_ldflags 3 "$version") ;;
    kustomize*) ldflags="-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$version" ;;
  esac
  if [ "$name" = flux-build ]; then
    (cd "$here/flux-build" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir.tmp/$program" .)
  elif [ -n "$replace" ]; then
    # A module of its own that requires the client and replaces the one dependency.
    rm -rf "$dir.src" && mkdir -p "$dir.src"
    (cd "$dir.src" && go mod init peerpods-build-go-clients/"$name" >/dev/null 2>&1 &&
      go mod edit -require="$package@$version" -replace="${replace%%=*}=${replace%%=*}@${replace#*=}" &&
      CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$dir.tmp/$program" "$package")
    rm -rf "$dir.src"
  else
    CGO_ENABLED=0 GOFLAGS= GOBIN="$dir.tmp" go install -trimpath -ldflags "$ldflags" "$package@$version"
  fi
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  echo "$name $version: built ($target)"
}

case "${1:-build}" in
  build)
    if [ $# -ge 2 ]; then
      build_client "$2"
    else
      for name in $clients; do build_client "$name"; done
    fi ;;
  path)
    [ $# -eq 2 ] || { echo "usage: $0 path NAME" >&2; exit 2; }
    client_path "$2" ;;
  list)
    for name in $clients; do
      read -r _ version _ _ <<<"$(client_spec "$name")"
      echo "$name $version $(client_path "$name")"
    done ;;
  *)
    echo "usage: $0 [build [NAME] | path NAME | list]" >&2
    exit 2 ;;
esac
