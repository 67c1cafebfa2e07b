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

echo "== find_package(zkrecipes CONFIG REQUIRED)"
cmake -S "$source_dir/tests/package/consumer" -B "$work/cmake-build" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" -j 2 >/dev/null
"$work/cmake-build/consumer"

echo "== pkg-config zkrecipes"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig:$work/prefix/share/pkgconfig"
pkg-config --exists zkrecipes
# The fixtures library is not part of the pkg-config package: the program
# links it by name from the same prefix.
g++ -std=c++17 "$source_dir/tests/package/consumer/main.cc" -o "$work/pkgconfig-consumer" \
  $(pkg-config --cflags zkrecipes) -L"$work/prefix/lib" -lzkrecipes_testing \
  $(pkg-config --libs zkrecipes)
"$work/pkgconfig-consumer"
echo "consumer test: find_package and pkg-config both work"
