#!/usr/bin/env bash
# Builds the Debian packages with CPack and checks them as Debian would lay
# them out (README, "Install"; CMakeLists.txt, "the Debian packages"):
#   libzkrecipes0.2           the shared library, in the multiarch libdir
#   zkr                       zkr, its man page (gzipped), bash completion
#   libzkrecipes-dev          headers, libzkrecipes.a, the .so link, CMake package, .pc
#   libzkrecipes-testing-dev  the test fixtures
#   libzkrecipes0.2-dbgsym, zkr-dbgsym   the debug symbols (.ddeb)
# Each package's control data (names, versions, dependencies on each other
# and on Debian's packages) and contents (what is in which, nothing else);
# the binaries stripped and their debug files under the build-id path;
# copyright and changelog.Debian.gz in each; lintian with no errors; the
# installed sizes. Then, without installing anything on the system (dpkg -x
# into empty directories): the runtime packages alone run zkr with the
# shared library from their libdir; with the -dev packages added, a small
# program builds and runs against the tree through find_package and through
# pkg-config, linked statically and dynamically.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir="$1"
source_dir="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/zkr-deb-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "deb: $*"; exit 1; }

(cd "$build_dir" && cpack -G DEB -B "$work/out" >/dev/null)
# Again into the same directory (a build directory kept between runs, as
# `tools/run.sh package` twice): it must succeed too, and change nothing of
# what the checks below read.
(cd "$build_dir" && cpack -G DEB -B "$work/out" >/dev/null) || fail "packaging again into the same directory failed"
version="$(grep -o 'project(zkrecipes VERSION [0-9.]*' "$source_dir/CMakeLists.txt" | awk '{print $3}')"
deb_version="$version-1"
arch="$(dpkg --print-architecture)"
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)"
libdir="usr/lib/$multiarch"
# The SONAME follows the minor version, and the library's package is named
# after it (libzkrecipes.so.X.Y in libzkrecipesX.Y).
abi="$(cut -d. -f1,2 <<<"$version")"
soname="libzkrecipes.so.$abi"
lib_package="libzkrecipes$abi"

deb() { echo "$work/out/${1}_${deb_version}_${arch}.${2:-deb}"; }
runtime_lib="$(deb "$lib_package")"
runtime_zkr="$(deb zkr)"
dev="$(deb libzkrecipes-dev)"
testing="$(deb libzkrecipes-testing-dev)"
dbgsym_lib="$(deb "$lib_package"-dbgsym ddeb)"
dbgsym_zkr="$(deb zkr-dbgsym ddeb)"

echo "== the packages"
expected="$(printf '%s\n' "$runtime_lib" "$runtime_zkr" "$dev" "$testing" "$dbgsym_lib" \
  "$dbgsym_zkr" | xargs -n1 basename | sort)"
built="$(ls "$work/out" | grep -E '\.d?deb$' | sort)"
[ "$built" = "$expected" ] || fail "built '$built', expected '$expected'"
for p in "$runtime_lib" "$runtime_zkr" "$dev" "$testing" "$dbgsym_lib" "$dbgsym_zkr"; do
  printf '%-48s Installed-Size: %6s KiB\n' "$(basename "$p")" \
    "$(dpkg-deb -f "$p" Installed-Size)"
done

# field PACKAGE FIELD: one control field.
field() { dpkg-deb -f "$1" "$2"; }
# depends_on PACKAGE REGEX: Depends has an alternative matching REGEX.
depends_on() {
  field "$1" Depends | tr ',' '\n' | grep -qE "^ *$2" \
    || fail "$(basename "$1"): Depends '$(field "$1" Depends)' lacks $2"
}

echo "== directory modes"
# dpkg -x gives the target directory the mode of the package's ./ entry: a
# package must not make it (or any directory) private.
for p in "$runtime_lib" "$runtime_zkr" "$dev" "$testing" "$dbgsym_lib" "$dbgsym_zkr"; do
  private="$(dpkg-deb -c "$p" | awk '$1 ~ /^d/ && $1 != "drwxr-xr-x" {print $1, $6}')"
  [ -z "$private" ] || fail "$(basename "$p") has directories not 0755: $private"
done

echo "== control data"
for p in "$runtime_lib" "$runtime_zkr" "$dev" "$testing"; do
  echo "$(field "$p" Package): Depends: $(field "$p" Depends)"
  [ "$(field "$p" Version)" = "$deb_version" ] || fail "$(basename "$p"): version is not $deb_version"
done
[ "$(field "$runtime_lib" Section)" = libs ] || fail "$lib_package is not in section libs"
[ "$(field "$dev" Section)" = libdevel ] || fail "libzkrecipes-dev is not in section libdevel"
# On Debian's packages (from dpkg-shlibdeps): the C client, Abseil, gflags.
depends_on "$runtime_lib" 'libzookeeper-mt2'
depends_on "$runtime_lib" 'libabsl'
depends_on "$runtime_lib" 'libstdc\+\+6'
depends_on "$runtime_zkr" 'libgflags'
depends_on "$runtime_zkr" 'libzookeeper-mt2'
# On each other, of the same version.
abi_re="${abi//./\\.}"
depends_on "$runtime_zkr" "libzkrecipes$abi_re \\(= $deb_version\\)"
depends_on "$dev" "libzkrecipes$abi_re \\(= $deb_version\\)"
depends_on "$dev" 'libzookeeper-mt-dev'
depends_on "$dev" 'libabsl-dev'
depends_on "$testing" "libzkrecipes-dev \\(= $deb_version\\)"
depends_on "$dbgsym_lib" "libzkrecipes$abi_re \\(= $deb_version\\)"
depends_on "$dbgsym_zkr" "zkr \\(= $deb_version\\)"
# The library's loader cache: a trigger, not ldconfig in maintainer scripts.
# (Each output is read whole before it is searched: grep -q leaving a pipe
# early would fail the pipeline, set -o pipefail.)
triggers="$(dpkg-deb --ctrl-tarfile "$runtime_lib" | tar -xO ./triggers)"
grep -qx 'activate-noawait ldconfig' <<<"$triggers" || fail "$lib_package: no ldconfig trigger"
# The library's shlibs: what a program built against it will depend on.
shlibs="$(dpkg-deb --ctrl-tarfile "$runtime_lib" | tar -xO ./shlibs)"
grep -qE "^libzkrecipes $abi_re libzkrecipes$abi_re \\(>= $deb_version\\)" <<<"$shlibs" \
  || fail "$lib_package: shlibs is '$shlibs'"

echo "== contents"
# contents PACKAGE: its regular files and links, one a line (./usr/...).
contents() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sort; }
# only PACKAGE REGEX...: every file matches one of the REGEXes, and each
# REGEX matches a file.
only() {
  local p="$1" files
  shift
  files="$(contents "$p")"
  for re in "$@"; do
    grep -qE "^\\./($re)\$" <<<"$files" || fail "$(basename "$p"): nothing matches $re"
  done
  local stray
  stray="$(grep -vE "^\\./($(IFS='|'; echo "$*"))\$" <<<"$files" || true)"
  [ -z "$stray" ] || fail "$(basename "$p") also holds: $stray"
}
ma="${libdir//./\\.}"
only "$runtime_lib" "$ma/libzkrecipes\\.so\\.${version//./\\.}" "$ma/libzkrecipes\\.so\\.$abi_re" \
  "usr/share/doc/libzkrecipes$abi_re/(copyright|changelog\\.Debian\\.gz)"
only "$runtime_zkr" 'usr/bin/zkr' 'usr/share/man/man1/zkr\.1\.gz' \
  'usr/share/bash-completion/completions/zkr' 'usr/share/doc/zkr/(copyright|changelog\.Debian\.gz)'
only "$dev" 'usr/include/zkrecipes/[a-z_]+\.h' 'usr/include/zkrecipes/version\.h' \
  "$ma/libzkrecipes\\.a" "$ma/libzkrecipes\\.so" "$ma/pkgconfig/zkrecipes\\.pc" \
  "$ma/cmake/zkrecipes/(zkrecipesConfig|zkrecipesConfigVersion|FindZooKeeper|zkrecipesTargets|zkrecipesTargets-[a-z]+)\\.cmake" \
  'usr/share/doc/libzkrecipes-dev/(copyright|changelog\.Debian\.gz)'
only "$testing" 'usr/include/zkrecipes/testing/[a-z_]+\.h' "$ma/libzkrecipes_testing\\.a" \
  "$ma/cmake/zkrecipes/zkrecipesTestingTargets(-[a-z]+)?\\.cmake" \
  'usr/share/doc/libzkrecipes-testing-dev/(copyright|changelog\.Debian\.gz)'
only "$dbgsym_lib" 'usr/lib/debug/\.build-id/[0-9a-f]{2}/[0-9a-f]{38}\.debug' \
  "usr/share/doc/libzkrecipes$abi_re-dbgsym"
only "$dbgsym_zkr" 'usr/lib/debug/\.build-id/[0-9a-f]{2}/[0-9a-f]{38}\.debug' \
  'usr/share/doc/zkr-dbgsym'

for p in "$runtime_lib" "$runtime_zkr" "$dev" "$testing" "$dbgsym_lib" "$dbgsym_zkr"; do
  dpkg-deb -x "$p" "$work/all"
done
all="$work/all"
echo "== stripped, with their debug files apart"
[ "$(readelf -d "$all/$libdir/libzkrecipes.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = "$soname" ] \
  || fail "the library's SONAME is not $soname"
for binary in "$all/$libdir/libzkrecipes.so.$version" "$all/usr/bin/zkr"; do
  [[ "$(file -L "$binary")" == *", stripped"* ]] || fail "$binary is not stripped: $(file -L "$binary")"
  [[ "$(readelf -S "$binary")" != *.debug_info* ]] || fail "$binary has .debug_info"
  build_id="$(readelf -n "$binary" | awk '/Build ID/ {print $3}')"
  debug="$all/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
  [ -f "$debug" ] || fail "no $debug for $binary"
  [[ "$(readelf -S "$debug" 2>/dev/null)" == *.debug_info* ]] || fail "$debug has no .debug_info"
  echo "$(basename "$binary"): stripped, $(du -k "$binary" | cut -f1) KiB; debug file \
$(du -k "$debug" | cut -f1) KiB at /usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
done
# Static libraries: no debug sections either (dh_strip --strip-debug).
for archive in "$all/$libdir/libzkrecipes.a" "$all/$libdir/libzkrecipes_testing.a"; do
  [[ "$(readelf -S "$archive")" != *.debug_info* ]] || fail "$archive has .debug_info"
done
echo "== documentation"
for p in "$lib_package" zkr libzkrecipes-dev libzkrecipes-testing-dev; do
  grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
    "$all/usr/share/doc/$p/copyright" || fail "$p: copyright is not in Debian's format"
  gzip -t "$all/usr/share/doc/$p/changelog.Debian.gz" || fail "$p: changelog.Debian.gz"
  changelog="$(zcat "$all/usr/share/doc/$p/changelog.Debian.gz")"
  [[ "$changelog" == "zkrecipes ($deb_version) "* ]] || fail "$p: the changelog is not of $deb_version"
done
man="$all/usr/share/man/man1/zkr.1.gz"
gzip -l "$man" >/dev/null || fail "the man page is not gzipped"
[[ "$(MANPAGER=cat man -l "$man" 2>/dev/null)" == *"EXIT STATUS"* ]] || fail "the man page does not render"

echo "== lintian"
# Every package at once (.ddeb copied to .deb: lintian goes by the name).
mkdir "$work/lintian"
cp "$runtime_lib" "$runtime_zkr" "$dev" "$testing" "$work/lintian/"
cp "$dbgsym_lib" "$work/lintian/$(basename "${dbgsym_lib%.ddeb}").deb"
cp "$dbgsym_zkr" "$work/lintian/$(basename "${dbgsym_zkr%.ddeb}").deb"
# No errors. The warning left, and why:
#   initial-upload-closes-no-bugs (each package but the -dbgsym ones): the
#     changelog's one entry closes no Debian bug (an ITP), as there is none:
#     the packages are built from the project, not uploaded to Debian.
# The informational tags (lintian -I) left: binary-has-unneeded-section
# .comment (CPack strips with --strip-unneeded, which keeps it),
# hardening-no-bindnow and hardening-no-fortify-functions (the build uses
# CMake's flags, not dpkg-buildflags'), no-symbols-control-file (a shlibs
# file instead: with a SONAME per minor version it says as much),
# cannot-check-whether-usr-share-doc-symlink-points-to-foreign-package (the
# -dbgsym doc links, checked alone).
lintian --tag-display-limit 0 "$work"/lintian/*.deb >"$work/lintian.out" 2>&1 || true
sed 's/^/  /' "$work/lintian.out"
echo "lintian: $(grep -c '^E:' "$work/lintian.out" || true) errors, $(grep -c '^W:' "$work/lintian.out" || true) warnings"
! grep -q '^E:' "$work/lintian.out" || fail "lintian reports errors"

echo "== the runtime packages alone, in an empty root"
dpkg -x "$runtime_lib" "$work/root"
dpkg -x "$runtime_zkr" "$work/root"
prefix="$work/root/usr"
loaded="$(LD_LIBRARY_PATH="$work/root/$libdir" ldd "$prefix/bin/zkr")"
grep -qF "$soname => $work/root/$libdir/$soname " <<<"$loaded" \
  || fail "zkr does not load $work/root/$libdir/$soname: $loaded"
zkr_version="$(LD_LIBRARY_PATH="$work/root/$libdir" "$prefix/bin/zkr" --version)"
echo "$zkr_version"
[[ "$zkr_version" == "zkr $version (zkrecipes $version,"* ]] || fail "zkr --version: $zkr_version"

echo "== with the -dev packages: consumers of the tree"
dpkg -x "$dev" "$work/root"
dpkg -x "$testing" "$work/root"
test -f "$prefix/include/zkrecipes/version.h" || fail "no version.h"
# shellcheck source=tests/package/consumers.sh
source "$source_dir/tests/package/consumers.sh"
build_and_run_consumers "$source_dir" "$prefix" "$work/root/$libdir/pkgconfig" \
  "$work/root/$libdir" "$work"
echo "deb test: six packages laid out as Debian's, lintian without errors, the runtime alone runs zkr, consumers build (static and shared)"
