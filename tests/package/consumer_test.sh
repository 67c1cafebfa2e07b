#!/usr/bin/env bash
# Installs the built zkrecipes into a temporary prefix, then builds and runs a
# small out-of-tree program against it: through find_package (CMake) and
# through pkg-config, each with the static and with the shared library.
# Usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir="$1"
source_dir="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/zkr-consumer-XXXXXX")"
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null

# shellcheck source=tests/package/consumers.sh
source "$source_dir/tests/package/consumers.sh"
# The libdir is Debian's multiarch one (lib/x86_64-linux-gnu) or lib.
libdir="$(dirname "$(find "$work/prefix" -name libzkrecipes.a | head -1)")"
build_and_run_consumers "$source_dir" "$work/prefix" "$libdir/pkgconfig" "$libdir" "$work"
echo "consumer test: find_package and pkg-config both work, static and shared"
