# Sourced by consumer_test.sh and deb_test.sh: builds and runs the small
# out-of-tree program (tests/package/consumer) against an installed
# zkrecipes, through find_package (CMake) and through pkg-config.
#   build_and_run_consumers SOURCE_DIR PREFIX PKGCONFIG_DIR LIBDIR WORK
build_and_run_consumers() {
  local source_dir="$1" prefix="$2" pkgconfig_dir="$3" libdir="$4" work="$5"
  echo "== find_package(zkrecipes CONFIG REQUIRED)"
  cmake -S "$source_dir/tests/package/consumer" -B "$work/cmake-build" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$work/cmake-build" -j 2 >/dev/null
  "$work/cmake-build/consumer"

  echo "== pkg-config zkrecipes"
  PKG_CONFIG_PATH="$pkgconfig_dir" pkg-config --exists zkrecipes
  # The fixtures library is not part of the pkg-config package: the program
  # links it by name from the same libdir.
  g++ -std=c++17 "$source_dir/tests/package/consumer/main.cc" -o "$work/pkgconfig-consumer" \
    $(PKG_CONFIG_PATH="$pkgconfig_dir" pkg-config --cflags zkrecipes) -L"$libdir" \
    -lzkrecipes_testing $(PKG_CONFIG_PATH="$pkgconfig_dir" pkg-config --libs zkrecipes)
  "$work/pkgconfig-consumer"
}
