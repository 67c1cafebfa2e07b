#!/usr/bin/env bash
# Installs the built zkrecipes into a temporary prefix, then builds and runs a
# small out-of-tree program against it twice: through find_package (CMake)
# and through pkg-config. Usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir="$1"
source_dir="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/zkr-consumer-XXXXXX")"
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null

# shellcheck source=tests/package/consumers.sh
source "$source_dir/tests/package/consumers.sh"
build_and_run_consumers "$source_dir" "$work/prefix" \
  "$work/prefix/lib/pkgconfig:$work/prefix/share/pkgconfig" "$work/prefix/lib" "$work"
echo "consumer test: find_package and pkg-config both work"
