#!/usr/bin/env bash
# The release binary built with profile-guided optimization (rustc's -Cprofile-generate and
# -Cprofile-use): an instrumented build of the dist profile builds every kustomization of the
# repository's own trees (the peer pods overlays and complete trees, the kustomize v5.8 cases and
# the test fixtures), llvm-profdata merges what it counted, and the dist profile is built again
# with those counts. The code is the same; the compiler lays out and inlines the hot paths it
# saw. docs/development.md has the figures (6-11% less wall time on the benchmark's 500-app
# tree, which is not in the training set).
#
#   tools/pgo-build.sh [--target TRIPLE] [--check]
#       builds target/pgo/use/TRIPLE/dist/peerpods-build (TRIPLE: the host's by default) and
#       copies it to target/pgo/peerpods-build;
#       --check then builds every training folder with it and with target/release/peerpods-build
#       (or PGO_CHECK_WITH) and fails unless both print the same and exit alike.
#   tools/pgo-build.sh bench [BENCH ARGS...]
#       the workload benchmark (cargo bench --bench workload -- BENCH ARGS) compiled with the same
#       profile and as the dist profile is, so that its floor (the project's parser and emitter)
#       has them too.
#
# CARGO: the cargo command ("cargo zigbuild" for the static Linux release). LLVM_PROFDATA: the
# llvm-profdata to use; else rustup's llvm-tools component, else llvm-profdata-N or
# /usr/lib/llvm-N/bin/llvm-profdata, N being the LLVM major version of rustc (their profile
# formats must agree). PGO_TRAINING_DIRS: more kustomization folders to train on.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

fail() {
  echo "pgo-build.sh: $1" >&2
  exit 1
}

rustc_info="$(rustc -vV)"
host="$(sed -n 's/^host: //p' <<<"$rustc_info")"
llvm_major="$(sed -n 's/^LLVM version: \([0-9]*\).*/\1/p' <<<"$rustc_info")"
read -r -a cargo <<<"${CARGO:-cargo}"
work="$root/target/pgo"
merged="$work/peerpods-build.profdata"

# The llvm-profdata whose LLVM major version is rustc's: LLVM_PROFDATA when set (or fail), else
# the first such one found.
find_profdata() {
  local of_rustc="LLVM version $llvm_major\."
  if [ -n "${LLVM_PROFDATA:-}" ]; then
    "$LLVM_PROFDATA" --version 2>/dev/null | grep -q "$of_rustc" ||
      fail "LLVM_PROFDATA=$LLVM_PROFDATA is not an llvm-profdata of LLVM $llvm_major (rustc's)"
    echo "$LLVM_PROFDATA"
    return
  fi
  local tool
  for tool in "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" \
    "$(command -v "llvm-profdata-$llvm_major" || true)" \
    "/usr/lib/llvm-$llvm_major/bin/llvm-profdata" \
    "$(command -v llvm-profdata || true)"; do
    if [ -n "$tool" ] && [ -x "$tool" ] && "$tool" --version 2>/dev/null | grep -q "$of_rustc"; then
      echo "$tool"
      return
    fi
  done
  fail "no llvm-profdata of LLVM $llvm_major (rustc's) found: rustup component add llvm-tools, or set LLVM_PROFDATA"
}

# Every folder the instrumented binary builds: the repository's trees, then PGO_TRAINING_DIRS.
training_dirs() {
  local dir
  for dir in overlays/* complete/* tests/kustomize_v5_8/* tests/fixtures/* ${PGO_TRAINING_DIRS:-}; do
    if [ -f "$dir/kustomization.yaml" ] || [ -f "$dir/kustomization.yml" ] || [ -f "$dir/Kustomization" ]; then
      echo "$dir"
    fi
  done
}

if [ "${1:-}" = bench ]; then
  shift
  [ -f "$merged" ] || fail "no profile at $merged: run tools/pgo-build.sh first"
  # --target keeps the profile off build scripts and procedural macros; the bench profile is
  # optimized as the dist profile is (fat LTO, one code unit), the floor with it.
  CARGO_PROFILE_BENCH_LTO=fat CARGO_PROFILE_BENCH_CODEGEN_UNITS=1 \
    RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$merged" exec cargo bench --bench workload \
    --target "$host" --target-dir "$work/bench" -- "$@"
fi

target="$host"
check=false
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?--target needs a value}"; shift 2 ;;
    --check) check=true; shift ;;
    *) fail "unknown argument $1 (see the comment at the top of this file)" ;;
  esac
done
profdata="$(find_profdata)"

# 1. The instrumented build, each run of which writes its counts into raw/.
raw="$work/raw"
rm -rf "$raw" "$merged"
mkdir -p "$raw"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" "${cargo[@]}" build --profile dist --locked \
  --target "$target" --target-dir "$work/generate"
instrumented="$work/generate/$target/dist/peerpods-build"

# 2. Training: a build of each folder (some are meant to fail, as their cases say; they count too).
dirs=()
while IFS= read -r dir; do dirs+=("$dir"); done < <(training_dirs)
[ "${#dirs[@]}" -gt 0 ] || fail "no training folder found"
built=0
for dir in "${dirs[@]}"; do
  if "$instrumented" build "$dir" >/dev/null 2>&1; then
    built=$((built + 1))
  fi
done
[ "$built" -gt 0 ] || fail "the instrumented binary built none of the ${#dirs[@]} training folders"
echo "pgo-build.sh: trained on ${#dirs[@]} folders ($built built without an error)"

# 3. The counts merged into one profile.
"$profdata" merge -o "$merged" "$raw"

# 4. The dist profile built with them.
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$merged" "${cargo[@]}" build --profile dist --locked \
  --target "$target" --target-dir "$work/use"
optimized="$work/peerpods-build"
cp "$work/use/$target/dist/peerpods-build" "$optimized"
echo "pgo-build.sh: $optimized"

if $check; then
  # The profile counted the parser (the hot path of every build)...
  counts="$("$profdata" show --function=parse12parse_stream "$merged")"
  max="$(sed -n 's/^Maximum function count: //p' <<<"$counts")"
  if [ "${max:-0}" -le 0 ]; then
    echo "$counts" >&2
    fail "the profile holds no counts for the parser"
  fi
  # ...and the optimized binary builds every training folder as the plain one does.
  plain="${PGO_CHECK_WITH:-$root/target/release/peerpods-build}"
  [ -x "$plain" ] || fail "no plain binary at $plain to compare with (cargo build --release)"
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  differ=0
  for dir in "${dirs[@]}"; do
    "$optimized" build "$dir" >"$scratch/pgo.out" 2>"$scratch/pgo.err" && pgo_status=0 || pgo_status=$?
    "$plain" build "$dir" >"$scratch/plain.out" 2>"$scratch/plain.err" && plain_status=0 || plain_status=$?
    if [ "$pgo_status" != "$plain_status" ] || ! cmp -s "$scratch/pgo.out" "$scratch/plain.out" ||
      ! cmp -s "$scratch/pgo.err" "$scratch/plain.err"; then
      echo "pgo-build.sh: $dir: the optimized binary differs from $plain (exit $pgo_status, $plain_status)" >&2
      differ=$((differ + 1))
    fi
  done
  [ "$differ" -eq 0 ] || fail "$differ of ${#dirs[@]} folders built differently"
  echo "pgo-build.sh: check passed: ${#dirs[@]} folders built alike; the parser's highest count $max"
fi
