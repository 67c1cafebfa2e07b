#!/usr/bin/env bash
# Builds zkrecipes_<version>_<arch>.deb with CPack, checks its control data
# (name, version, runtime dependencies on Debian's packages), extracts it
# without installing anything on the system (dpkg-deb -x), and builds and
# runs a small program against the extracted tree twice: through
# find_package (CMake) and through pkg-config. Also runs the packaged zkr
# (--version) and renders its man page. Usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir="$1"
source_dir="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/zkr-deb-XXXXXX")"
trap 'rm -rf "$work"' EXIT

(cd "$build_dir" && cpack -G DEB -B "$work/out" >/dev/null)
deb="$(ls "$work"/out/zkrecipes_*.deb)"
echo "== $(basename "$deb")"
info="$(dpkg-deb --info "$deb")"
echo "$info" | grep -E '^ (Package|Version|Depends|Recommends):'
version="$(grep -o 'project(zkrecipes VERSION [0-9.]*' "$source_dir/CMakeLists.txt" | awk '{print $3}')"
grep -q "^ Version: $version\$" <<<"$info" || { echo "deb: version is not $version"; exit 1; }
for dep in libzookeeper-mt2 libgflags; do
  grep -E '^ Depends:' <<<"$info" | grep -q "$dep" || { echo "deb: no dependency on $dep"; exit 1; }
done
grep -E '^ Depends:' <<<"$info" | grep -q 'libabsl' || { echo "deb: no dependency on Abseil"; exit 1; }

dpkg-deb -x "$deb" "$work/root"
prefix="$work/root/usr"
"$prefix/bin/zkr" --version | grep -q "^zkr $version " || { echo "deb: zkr --version"; exit 1; }
MANPAGER=cat man -l "$prefix/share/man/man1/zkr.1" | grep -q 'EXIT STATUS' \
  || { echo "deb: the man page does not render"; exit 1; }
test -f "$prefix/include/zkrecipes/version.h" || { echo "deb: no version.h"; exit 1; }

echo "== consumers of the extracted package"
pc="$(dirname "$(find "$prefix" -name zkrecipes.pc | head -1)")"
# shellcheck source=tests/package/consumers.sh
source "$source_dir/tests/package/consumers.sh"
build_and_run_consumers "$source_dir" "$prefix" "$pc" "$(dirname "$pc")" "$work"
echo "deb test: the package carries its dependencies, zkr, the man page, and builds consumers"
