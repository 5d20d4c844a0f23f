#!/usr/bin/env bash
# A short run of every fuzz target (CI's smoke run; fuzz/README.md has the long runs).
# cargo-fuzz is installed here, pinned, under the user's cache folder. libFuzzer needs nightly
# compiler flags: the nightly toolchain where rustup has one, else the stable compiler with
# RUSTC_BOOTSTRAP=1 (nightly features on a stable rustc; for this test build only).
set -euo pipefail
cd "$(dirname "$0")"
seconds=${FUZZ_SECONDS:-20}
cargo_fuzz_version=0.13.2

missing() {
  if [ "${CI:-}" = true ]; then
    echo "fuzz smoke run: $1" >&2
    exit 1
  fi
  echo "SKIP fuzz smoke run: $1" >&2
  exit 0
}

tools="${XDG_CACHE_HOME:-$HOME/.cache}/peerpods-build/cargo-fuzz-$cargo_fuzz_version"
if [ ! -x "$tools/bin/cargo-fuzz" ]; then
  cargo install --quiet --locked --version "$cargo_fuzz_version" --root "$tools" cargo-fuzz ||
    missing "cargo-fuzz $cargo_fuzz_version could not be installed"
fi
export PATH="$tools/bin:$PATH"

if cargo +nightly --version >/dev/null 2>&1; then
  toolchain=(+nightly)
else
  toolchain=()
  export RUSTC_BOOTSTRAP=1
fi
for target in $(cargo "${toolchain[@]}" fuzz list); do
  mkdir -p "corpus/$target"
  echo "fuzz smoke run: $target for ${seconds}s"
  cargo "${toolchain[@]}" fuzz run "$target" "corpus/$target" "seeds/$target" -- -max_total_time="$seconds" -timeout=30
done
