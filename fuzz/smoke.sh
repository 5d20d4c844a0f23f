#!/usr/bin/env bash
# A short run of every fuzz target (CI's smoke run; fuzz/README.md has the long runs).
# Needs the nightly toolchain and cargo-fuzz (installed here when missing). Under CI=true a
# missing nightly is a failure; elsewhere a skip.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${FUZZ_SECONDS:-20}

missing() {
  if [ "${CI:-}" = true ]; then
    echo "fuzz smoke run: $1" >&2
    exit 1
  fi
  echo "SKIP fuzz smoke run: $1" >&2
  exit 0
}

cargo +nightly --version >/dev/null 2>&1 || missing "no nightly toolchain (rustup toolchain install nightly)"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz || missing "cargo-fuzz could not be installed"
fi
for target in $(cargo +nightly fuzz list); do
  mkdir -p "corpus/$target"
  echo "fuzz smoke run: $target for ${seconds}s"
  cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- -max_total_time="$seconds" -timeout=30
done
