# Sourced (not run) by the scripts that build Go programs for the tests from their modules.
# One cache under the user's cache folder, kept between runs: Go's build cache, the module cache
# and the built programs (each in a folder named by module and version).
peerpods_cache="${XDG_CACHE_HOME:-$HOME/.cache}/peerpods-build"
export GOCACHE="$peerpods_cache/go-build"
export GOMODCACHE="$peerpods_cache/go-mod"
export GOPATH="$peerpods_cache/go-path"
export GOFLAGS="-mod=mod"
peerpods_go_bin="$peerpods_cache/go-bin"
mkdir -p "$GOCACHE" "$GOMODCACHE" "$peerpods_go_bin"
# kustomize v5.8.3 needs Go 1.27 (its go.mod says go 1.27.0); the go command fetches this toolchain
# from the module proxy into the module cache when the installed Go is older.
export GOTOOLCHAIN=go1.27.3
