# Sourced by consumer_test.sh and deb_test.sh: builds and runs the small
# out-of-tree program (tests/package/consumer) against an installed
# zkrecipes, through find_package (CMake) and through pkg-config, each
# linking the static library and the shared one; ldd shows which.
#   build_and_run_consumers SOURCE_DIR PREFIX PKGCONFIG_DIR LIBDIR WORK
build_and_run_consumers() {
  local source_dir="$1" prefix="$2" pkgconfig_dir="$3" libdir="$4" work="$5"
  local linking
  for linking in static shared; do
    echo "== find_package(zkrecipes CONFIG REQUIRED), $linking"
    # The shared one with clang++ (C++14 by default) and a FindZooKeeper.cmake
    # of the consumer's own first on its module path.
    local shared=OFF own_module=OFF compiler=g++
    [ "$linking" = shared ] && shared=ON own_module=ON compiler=clang++
    cmake -S "$source_dir/tests/package/consumer" -B "$work/cmake-build-$linking" \
      -DCMAKE_PREFIX_PATH="$prefix" -DZKR_CONSUMER_SHARED="$shared" \
      -DZKR_CONSUMER_OWN_FIND_MODULE="$own_module" -DCMAKE_CXX_COMPILER="$compiler" >/dev/null
    cmake --build "$work/cmake-build-$linking" -j 2 >/dev/null
    check_linking "$work/cmake-build-$linking/consumer" "$linking" "$libdir"
    LD_LIBRARY_PATH="$libdir" "$work/cmake-build-$linking/consumer"
  done

  PKG_CONFIG_PATH="$pkgconfig_dir" pkg-config --exists zkrecipes
  local cflags libs
  cflags="$(PKG_CONFIG_PATH="$pkgconfig_dir" pkg-config --cflags zkrecipes)"
  libs="$(PKG_CONFIG_PATH="$pkgconfig_dir" pkg-config --libs zkrecipes)"
  for linking in shared static; do
    echo "== pkg-config zkrecipes, $linking"
    # -lzkrecipes finds libzkrecipes.so first, as on any Debian system;
    # -l:libzkrecipes.a asks for the static library. The fixtures library is
    # not part of the pkg-config package: the program links it by name.
    local these="$libs"
    [ "$linking" = static ] && these="${libs/-lzkrecipes /-l:libzkrecipes.a }"
    # shellcheck disable=SC2086
    g++ -std=c++17 "$source_dir/tests/package/consumer/main.cc" \
      -o "$work/pkgconfig-consumer-$linking" $cflags -L"$libdir" -lzkrecipes_testing $these
    check_linking "$work/pkgconfig-consumer-$linking" "$linking" "$libdir"
    LD_LIBRARY_PATH="$libdir" "$work/pkgconfig-consumer-$linking"
  done
}

# check_linking PROGRAM static|shared LIBDIR: a shared program loads
# libzkrecipes.so.0.2 from LIBDIR (nowhere else); a static one none.
check_linking() {
  local program="$1" linking="$2" libdir="$3" loaded
  loaded="$(LD_LIBRARY_PATH="$libdir" ldd "$program" | grep 'libzkrecipes' || true)"
  if [ "$linking" = shared ]; then
    grep -qF "libzkrecipes.so.0.2 => $libdir/libzkrecipes.so.0.2 " <<<"$loaded" \
      || { echo "$program: libzkrecipes.so.0.2 not loaded from $libdir: '$loaded'"; return 1; }
  elif [ -n "$loaded" ]; then
    echo "$program: linked statically but loads '$loaded'"
    return 1
  fi
}
