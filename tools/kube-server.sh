#!/usr/bin/env bash
# A real Kubernetes API server for the end-to-end tests (tests/integration/e2e.rs), built from Go
# modules and run on 127.0.0.1 only. docs/real-kubernetes.md says why and how long each step takes.
#
#   tools/kube-server.sh build   build etcd, kube-apiserver and kube-controller-manager (cached by version)
#   tools/kube-server.sh start   start the three (certificates, kubeconfig, pid files); wait until ready
#   tools/kube-server.sh stop    stop them by process id
#   tools/kube-server.sh status  say whether the server answers
#   tools/kube-server.sh env     print the export line the tests read (PEERPODS_KUBECONFIG)
#   tools/kube-server.sh test    build, start, CI=true cargo test --release -- e2e_, stop
#
# Programs are built from the k8s.io/kubernetes module at $kube_version; etcd from go.etcd.io/etcd/server
# at the version that kubernetes release requires (the same etcd its own tests run against). The state
# (certificates, etcd data, logs, pid files, ports, kubeconfig) lives in $PEERPODS_KUBE_DIR, by
# default target/kube-server under the repository; the three listen on four consecutive free ports
# of 127.0.0.1 (PEERPODS_KUBE_PORT picks the first).
set -euo pipefail

kube_version=v1.37.2
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/go-env.sh
. "$repo/tools/go-env.sh"
# go-env.sh sets it too; kept here so that this script says which Go it builds with.
export GOTOOLCHAIN=go1.27.3
bin_dir="$peerpods_go_bin/kubernetes-$kube_version"
state=${PEERPODS_KUBE_DIR:-$repo/target/kube-server}
programs=(etcd kube-apiserver kube-controller-manager)

say() { printf 'kube-server: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# The module that builds the programs: it requires k8s.io/kubernetes and replaces each staging module
# (k8s.io/<name> => ./staging/src/k8s.io/<name> in kubernetes' go.mod) by its published v0.Y.Z.
write_build_module() {
  local module=$1 kube_mod staging_version
  command -v go >/dev/null || die "go not found: install Go 1.26 or newer to build the server"
  kube_mod=$(go mod download -json "k8s.io/kubernetes@$kube_version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -f "$kube_mod" ] || die "cannot download k8s.io/kubernetes@$kube_version"
  staging_version=v0.${kube_version#v1.}
  mkdir -p "$module"
  {
    printf 'module peerpods-build/kube-server\n\n'
    sed -n 's/^go \(.*\)$/go \1/p' "$kube_mod"
    printf '\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$kube_version"
    sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*$|\t\1 => \1 '"$staging_version"'|p' "$kube_mod"
    printf ')\n'
  } >"$module/go.mod"
  # A file left out of every build by its tag, importing the programs' packages so that `go mod tidy`
  # records their dependencies (etcd's server is already in kubernetes' module graph).
  cat >"$module/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
EOF
}

cmd_build() {
  local missing=0 p module
  for p in "${programs[@]}"; do [ -x "$bin_dir/$p" ] || missing=1; done
  if [ "$missing" = 0 ]; then
    say "cached: $bin_dir"
    return
  fi
  module="$peerpods_cache/kube-server-module-$kube_version"
  write_build_module "$module"
  say "building kubernetes $kube_version (etcd, kube-apiserver, kube-controller-manager) into $bin_dir"
  local version_flags="-s -X k8s.io/component-base/version.gitVersion=$kube_version"
  version_flags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$kube_version" | cut -d. -f2)"
  version_flags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  (
    cd "$module"
    go mod tidy
    mkdir -p "$bin_dir.partial"
    go build -trimpath -ldflags=-s -o "$bin_dir.partial/etcd" go.etcd.io/etcd/server/v3
    go build -trimpath -ldflags="$version_flags" -o "$bin_dir.partial/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    go build -trimpath -ldflags="$version_flags" -o "$bin_dir.partial/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
  )
  rm -rf "$bin_dir"
  mv "$bin_dir.partial" "$bin_dir"
  du -sh "$bin_dir"/* >&2
}

# Four consecutive free ports on 127.0.0.1 (etcd's client and peer ports, the API server's, the
# controller manager's), from PEERPODS_KUBE_PORT or else from a number derived from the state
# folder, so two checkouts on one machine do not collide; recorded in $state/ports for stop and status.
choose_ports() {
  local tries base=${PEERPODS_KUBE_PORT:-$((20000 + $(printf '%s' "$state" | cksum | cut -d' ' -f1) % 4000 * 4))} offset taken
  for ((tries = 0; tries < 50; tries++, base += 4)); do
    taken=0
    for offset in 0 1 2 3; do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((base + offset))") 2>/dev/null; then taken=1; fi
    done
    if [ "$taken" = 0 ]; then
      printf 'etcd_port=%s\netcd_peer_port=%s\napi_port=%s\ncontroller_port=%s\n' \
        "$base" "$((base + 1))" "$((base + 2))" "$((base + 3))" >"$state/ports"
      return
    fi
    [ -z "${PEERPODS_KUBE_PORT:-}" ] || die "ports $base..$((base + 3)) (PEERPODS_KUBE_PORT) are not all free"
  done
  die "found no four free consecutive ports"
}

read_ports() {
  [ -f "$state/ports" ] || return 1
  # shellcheck source=/dev/null
  . "$state/ports"
}

# Certificates: one CA of our own signs the API server's serving certificate (for 127.0.0.1) and
# the admin's client certificate (O=system:masters); a key pair signs service account tokens.
make_certificates() {
  local pki=$state/pki
  [ -f "$pki/admin.crt" ] && return
  command -v openssl >/dev/null || die "openssl not found"
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -keyout ca.key -out ca.crt \
      -subj "/CN=peerpods-build test CA" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -out admin.crt 2>/dev/null
    openssl genrsa -out service-account.key 2048 2>/dev/null
    openssl rsa -in service-account.key -pubout -out service-account.pub 2>/dev/null
    rm -f ./*.csr ./*.ext ca.srl
  )
}

write_kubeconfig() {
  local pki=$state/pki
  cat >"$state/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: peerpods-build-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $pki/ca.crt
users:
- name: admin
  user:
    client-certificate: $pki/admin.crt
    client-key: $pki/admin.key
contexts:
- name: peerpods-build-test
  context:
    cluster: peerpods-build-test
    user: admin
current-context: peerpods-build-test
KUBECONFIG
}

# The process id in a pid file, when that process is still running.
running_pid() {
  local file=$state/$1.pid pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file")
  case "$pid" in '' | *[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

# Starts one program in the background, its output in $state/NAME.log, its process id in $state/NAME.pid.
launch() {
  local name=$1
  shift
  nohup "$bin_dir/$name" "$@" >"$state/$name.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$state/$name.pid"
}

# Polls an address until it answers $4, or dies after $2 seconds. https addresses are checked
# with the admin's certificate against our CA; the controller manager serves a self-signed
# certificate of its own (on 127.0.0.1), so its check passes -k as $5.
wait_for() {
  local url=$1 seconds=$2 name=$3 want=$4 pki=$state/pki deadline=$((SECONDS + $2))
  local trust=(--cacert "$pki/ca.crt")
  [ "${5:-}" = -k ] && trust=(-k)
  while ((SECONDS < deadline)); do
    if [ "$(curl -s --max-time 2 "${trust[@]}" --cert "$pki/admin.crt" --key "$pki/admin.key" "$url" 2>/dev/null | tr -d ' \n')" = "$want" ]; then
      return
    fi
    running_pid "$name" >/dev/null || {
      tail -n 20 "$state/$name.log" >&2
      die "$name exited; its log: $state/$name.log"
    }
    sleep 0.25
  done
  tail -n 20 "$state/$name.log" >&2
  die "$name did not become ready within ${seconds}s; its log: $state/$name.log"
}

cmd_start() {
  local p pki=$state/pki
  for p in "${programs[@]}"; do
    [ -x "$bin_dir/$p" ] || die "$p $kube_version is not built: run tools/kube-server.sh build"
  done
  command -v curl >/dev/null || die "curl not found (the readiness checks use it)"
  if running_pid kube-apiserver >/dev/null; then
    say "already running (kubeconfig: $state/kubeconfig); tools/kube-server.sh stop stops it"
    return
  fi
  cmd_stop 2>/dev/null
  mkdir -p "$state"
  choose_ports
  read_ports
  make_certificates
  write_kubeconfig
  # etcd starts empty each time: every run begins on an empty cluster.
  rm -rf "$state/etcd-data"
  launch etcd --name peerpods-build-test --data-dir "$state/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "peerpods-build-test=http://127.0.0.1:$etcd_peer_port" --log-level warn
  wait_for "http://127.0.0.1:$etcd_port/health" 60 etcd '{"health":"true","reason":""}'
  launch kube-apiserver --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --authorization-mode RBAC --allow-privileged=true \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/service-account.pub" \
    --service-account-signing-key-file "$pki/service-account.key" --service-cluster-ip-range 10.96.0.0/24 \
    --endpoint-reconciler-type none
  wait_for "https://127.0.0.1:$api_port/readyz" 120 kube-apiserver ok
  launch kube-controller-manager --kubeconfig "$state/kubeconfig" \
    --authentication-kubeconfig "$state/kubeconfig" --authorization-kubeconfig "$state/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$controller_port" --leader-elect=false --controllers '*' \
    --service-account-private-key-file "$pki/service-account.key" --root-ca-file "$pki/ca.crt"
  wait_for "https://127.0.0.1:$controller_port/healthz" 120 kube-controller-manager ok -k
  say "ready: export PEERPODS_KUBECONFIG=$state/kubeconfig (tools/kube-server.sh stop stops it)"
}

# Stops each program by the process id in its pid file (TERM, then KILL after 20 seconds).
cmd_stop() {
  local p pid i
  for p in kube-controller-manager kube-apiserver etcd; do
    if pid=$(running_pid "$p"); then
      kill "$pid" 2>/dev/null || true
      for ((i = 0; i < 80; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
      done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
      say "stopped $p ($pid)"
    fi
    rm -f "$state/$p.pid"
  done
}

cmd_status() {
  local pki=$state/pki
  if running_pid kube-apiserver >/dev/null && read_ports &&
    [ "$(curl -s --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      "https://127.0.0.1:$api_port/readyz" 2>/dev/null)" = ok ]; then
    say "running: export PEERPODS_KUBECONFIG=$state/kubeconfig"
  else
    say "not running: tools/kube-server.sh start"
    return 1
  fi
}

cmd_test() {
  cmd_build
  cmd_start
  trap cmd_stop EXIT
  cd "$repo"
  PEERPODS_KUBECONFIG=$state/kubeconfig CI=true cargo test --release -- e2e_
}

case "${1:-}" in
  build) cmd_build ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) printf 'export PEERPODS_KUBECONFIG=%s\n' "$state/kubeconfig" ;;
  test) cmd_test ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
