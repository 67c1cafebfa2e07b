#!/usr/bin/env bash
# zkrecipes entry point: installs what the project needs, builds, and runs.
#
#   tools/run.sh demo [--zk HOST:PORT,...]   the main job on an embedded local ZooKeeper
#   tools/run.sh test [ctest args...]        build, check the thread-safety annotations
#                                            (clang), and run every test (unit,
#                                            integration, real Curator and Kazoo
#                                            peers, chaos, model: spin)
#   tools/run.sh bench [zkr bench flags]     zkr bench; with --compare it also installs
#                                            Curator and Kazoo to measure them alongside
#   tools/run.sh soak [--seconds=N] [--seed=S] the chaos suite for N seconds of faults
#                                            (default 1200; 3600 is the hour), its run
#                                            directory kept (ledger, samples.csv,
#                                            minutes.csv, soak.png)
#   tools/run.sh limits                      the tested limits at scale: 5,000 to 50,000
#                                            waits on one session across a connection
#                                            reset, and a 100,000-deep queue
#   tools/run.sh build                       install dependencies and build only
#   tools/run.sh package                     build the .debs (libzkrecipes0.2, zkr, -dev, ...)
#                                            (CPack) into build/package/
#
# ZKR_SANITIZE=address,undefined builds (in build-sanitize/) and runs with
# AddressSanitizer and UndefinedBehaviorSanitizer; the C client's own leak at
# closing an expired handle is suppressed (tools/lsan.supp).
#
# Dependencies come from Debian 12 packages only; missing ones are installed
# with apt-get (idempotent: nothing is installed twice).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize="${ZKR_SANITIZE:-}"
if [ -n "$sanitize" ]; then
  build_dir="${ZKR_BUILD_DIR:-$root/build-sanitize}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tools/lsan.supp}"
else
  build_dir="${ZKR_BUILD_DIR:-$root/build}"
fi
jobs="${ZKR_JOBS:-2}"

# What building zkr and running the demo need (its embedded ZooKeeper
# included); GoogleTest because the build is configured with the tests.
demo_packages=(
  build-essential cmake pkg-config
  libzookeeper-mt-dev libabsl-dev libgflags-dev libgtest-dev libgmock-dev
  zookeeper default-jre-headless procps
)
# Everything else adds the checks: clang (thread-safety analysis), spin (the
# model), man-db (the man page renders), tmux (a real terminal for zkr ls
# --watch), lintian (the .debs, deb_test).
packages=("${demo_packages[@]}" clang spin man-db tmux lintian)

# The peer libraries: `test` shares locks and elections with them
# (tests/interop) and `bench --compare` measures against them.
peer_packages=(
  libcurator-recipes-java libcurator-framework-java default-jdk-headless python3-kazoo
)

# install_dependencies [PACKAGE...]: the full list plus these;
# install_packages PACKAGE...: only these.
install_dependencies() {
  install_packages "${packages[@]}" "$@"
}

install_packages() {
  local missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "run.sh: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "run.sh: need root to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# build [TARGET...]: configures, then builds these targets (none: all).
build() {
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="${ZKR_BUILD_TYPE:-RelWithDebInfo}" \
    -DZKR_SANITIZE="$sanitize" >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
}

# The library and zkr again with clang and -Wthread-safety -Werror: every
# ABSL_GUARDED_BY / ABSL_LOCKS_EXCLUDED annotation is checked, so a missing
# lock is a build error (GCC ignores the annotations).
check_thread_safety() {
  local dir="${ZKR_CLANG_BUILD_DIR:-$root/build-clang}"
  cmake -S "$root" -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DZKR_THREAD_SAFETY=ON -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$dir" -j "$jobs" --target zkrecipes zkrecipes_testing zkr
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  demo)
    # Only what the tour needs: zkr, not the tests and checks.
    install_packages "${demo_packages[@]}"
    build zkr
    exec "$build_dir/tools/zkr/zkr" demo "$@"
    ;;
  test)
    install_dependencies "${peer_packages[@]}"
    build
    check_thread_safety
    cd "$build_dir"
    exec ctest --output-on-failure -j "$jobs" --timeout 900 "$@"
    ;;
  bench)
    case " $* " in
      *" --compare "*) install_dependencies "${peer_packages[@]}" ;;
      *) install_dependencies ;;
    esac
    build
    exec "$build_dir/tools/zkr/zkr" bench "$@"
    ;;
  soak)
    # The chaos suite for as long as asked (default 20 minutes), its run
    # directory (ledger, worker and server logs, seed, the RSS/descriptor
    # samples, the per-minute CSV and plot) kept, the seed printed for a
    # replay with --seed, and a summary table per fault kind. Builds only the
    # chaos binaries it runs, not the whole tree.
    seconds=1200
    seed=""
    for arg in "$@"; do
      case "$arg" in
        --seconds=*) seconds="${arg#--seconds=}" ;;
        --seed=*) seed="${arg#--seed=}" ;;
        *) echo "run.sh soak: unknown argument $arg (--seconds=N --seed=S)" >&2; exit 2 ;;
      esac
    done
    install_dependencies
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="${ZKR_BUILD_TYPE:-RelWithDebInfo}" \
      -DZKR_SANITIZE="$sanitize" >/dev/null
    cmake --build "$build_dir" -j "$jobs" --target chaos_test chaos_worker chaos_load
    cd "$build_dir"
    # A new seed each soak unless one is given to replay; the test prints it
    # and writes it into the run directory.
    export ZKR_CHAOS_SEED="${seed:-$(date +%s)}"
    export ZKR_CHAOS_SOAK="$seconds" ZKR_CHAOS_KEEP=1 ZKR_CHAOS_WORKER="$build_dir/chaos_worker"
    export ZKR_CHAOS_LOAD="$build_dir/chaos_load"
    exec ./chaos_test --gtest_filter='ChaosTest.*'
    ;;
  limits)
    # The figures of the README's "Limits": many waits on one session at the
    # server's default packet limit, and a 100,000-deep queue.
    install_dependencies
    build
    cd "$build_dir"
    ./watch_limit_test --gtest_also_run_disabled_tests --gtest_filter='WatchLimitAtDefaultTest.*'
    ZKR_DEEP_QUEUE=100000 ./deep_queue_test
    ;;
  build)
    install_dependencies
    build
    ;;
  package)
    install_dependencies
    build
    cd "$build_dir"
    cpack -G DEB -B "$build_dir/package"
    ls "$build_dir"/package/*.deb "$build_dir"/package/*.ddeb
    ;;
  *)
    echo "usage: tools/run.sh demo [--zk HOST:PORT,...] | test [ctest args] | bench [--compare ...] | soak [--seconds=N (3600: the hour)] [--seed=S] | limits | build | package" >&2
    exit 2
    ;;
esac
