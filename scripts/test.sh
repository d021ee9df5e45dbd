#!/usr/bin/env bash
# hookset's test command: every test, with GCC and Clang (GCC's build of the unit test programs
# is the ASan+UBSan one), then the threading tests with ThreadSanitizer.
#
#   bash scripts/test.sh
#
# Installs missing Debian packages first (when root). Build trees: build/gcc, build/clang,
# build/gcc-asan, build/gcc-tsan (reused between runs, so a second run only rebuilds what
# changed). Every stage runs even if an earlier one failed; the exit status is non-zero if
# anything failed.
#
# Each stage is the configure, build and test preset of its name in CMakePresets.json, so one
# stage is reproduced by hand with
#   cmake --preset gcc && cmake --build --preset gcc && ctest --preset gcc
#
# Build type: Debug (-O0 -g1: line tables) for the GCC and Clang trees, because compile time
# dominates (the tests are template/coroutine heavy and quick to run) and -O0 is the fastest to
# compile and the easiest to debug; plus -D_GLIBCXX_ASSERTIONS (bounds-checked std containers, no
# ABI change).
# The ASan+UBSan tree is Debug too (ASan and UBSan at -O1 cost GCC 1.65x the compile time of -O0)
# and GCC's only build of the unit test programs with Boost 1.81 (with -Werror; the gcc tree
# builds everything else); UBSan's alignment and null checks are left out there (at -O0 they
# double its compile time); the optimised coroutine code paths run under sanitizers in the
# fuzz stage (clang++-16, -O1, ASan+UBSan) and under TSan (GCC, -O1). scripts/main.sh builds
# everything at -O2.
#
# Then clang++-16 with libc++, and the core against Boost 1.74 (the oldest supported). Last, two
# stages side by side: the ThreadSanitizer tree (its tests one at a time), which builds only the
# multi-threaded tests (tests/threads/, tests/asio/, ...: TSan cannot find anything in
# single-threaded code) and runs them at -O1 -g1 (any TSan report fails the stage: TSan exits
# 66), and the libFuzzer target (clang++-16, -O0) fuzzed for HOOKSET_FUZZ_SECONDS. The soak test
# (tests/soak) runs scaled down in every tree and under TSan; scripts/soak.sh runs it at full
# size.
#
# Environment: HOOKSET_GCC / HOOKSET_CLANG pick the compilers (default g++-12 / clang++-14 when
# present, else g++ / clang++); HOOKSET_TSAN_CXX the ThreadSanitizer stage's (default: the GCC;
# Clang 14's TSan runs these tests clean too); HOOKSET_JOBS the parallelism (default 2);
# HOOKSET_SEED the seed of the model-based randomized tests (tests/model/).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

source scripts/deps.sh
# clang-16 and its sanitizer runtimes: the libFuzzer stage (Clang 14 cannot compile hookset's
# coroutines with sanitizers, an LLVM bug).
hookset_deps clang-16 libclang-rt-16-dev

pick() { for c in "$@"; do if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi; done; echo "$1"; }
GCC=${HOOKSET_GCC:-$(pick g++-12 g++)}
CLANG=${HOOKSET_CLANG:-$(pick clang++-14 clang++)}
JOBS=${HOOKSET_JOBS:-2}

mkdir -p build/logs
summary=()
failed=0
script_start=$SECONDS

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# stage <name> <compiler> [<ctest args> [<cmake -D args>...]]
#   Configures, builds and tests build/<name>. When CMakePresets.json has a configure preset
#   <name> (with build and test presets of the same name), the presets say everything: cache
#   variables, build targets, test selection, sanitizer options; <compiler> overrides the preset's
#   CMAKE_CXX_COMPILER and the other arguments are added to it. A stage without a preset is
#   configured from its arguments alone: `cmake -S . -B build/<name> -G Ninja <cmake -D args>`.
#   STAGE_TARGETS="t1 t2": build only these targets (default: the build preset's, or everything)
#   STAGE_RUNNER="cmd args": run ctest under this command
#   STAGE_TEST_JOBS=n: run n tests at once (default: $JOBS, the build's jobs)
stage() {
  local name=$1 cxx=$2 ctest_args=${3:-}
  shift $(($# < 3 ? $# : 3))
  local dir=build/$name log=build/logs/$name t0=$SECONDS status=ok detail="" preset=""
  echo
  echo "================ [$name] $cxx -> $dir ================"
  if cmake --list-presets=configure 2>/dev/null | grep -q "^ *\"$name\""; then
    preset=$name
  fi

  local configure
  if [ -n "$preset" ]; then
    configure=(cmake --preset "$preset" -DCMAKE_CXX_COMPILER="$cxx" "$@")
  else
    configure=(cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "$@")
  fi
  if ! "${configure[@]}" >"$log-configure.log" 2>&1; then
    echo "[$name] configure failed; retrying from a clean build directory"
    rm -rf "$dir"
    if ! "${configure[@]}" >"$log-configure.log" 2>&1; then
      cat "$log-configure.log"
      summary+=("[$name] FAILED at configure ($(fmt_time $((SECONDS - t0))))")
      failed=1
      return
    fi
  fi
  # (Without the listing of the preset's variables that opens the log.)
  awk 'shown || !/^(Preset [a-zA-Z ]+:|  .*|)$/ {shown=1} shown' "$log-configure.log" |
    grep -v -E '^-- (Configuring done|Generating done|Build files have)' || true
  local t_configure=$((SECONDS - t0))

  # -k 0 (also in the build presets): build everything that can be built, so one broken file
  # does not hide the other results.
  local t1=$SECONDS targets=() build
  for t in ${STAGE_TARGETS:-}; do targets+=(--target "$t"); done
  if [ -n "$preset" ]; then
    build=(cmake --build --preset "$preset" -j "$JOBS" "${targets[@]}")
  else
    build=(cmake --build "$dir" -j "$JOBS" "${targets[@]}" -- -k 0)
  fi
  if "${build[@]}" 2>&1 | tee "$log-build.log"; then
    detail="build ok"
  else
    status=FAILED
    detail="build FAILED ($(grep -c '^FAILED: ' "$log-build.log") steps)"
  fi
  local t_build=$((SECONDS - t1))

  local t2=$SECONDS test_command
  if [ -n "$preset" ]; then
    test_command=(ctest --preset "$preset" -j "${STAGE_TEST_JOBS:-$JOBS}")
  else
    test_command=(ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "${STAGE_TEST_JOBS:-$JOBS}")
  fi
  # shellcheck disable=SC2086  # ctest_args is a word list on purpose
  # shellcheck disable=SC2086  # so is STAGE_RUNNER
  if ${STAGE_RUNNER:-} "${test_command[@]}" $ctest_args 2>&1 | tee "$log-ctest.log"; then
    :
  else
    status=FAILED
  fi
  local t_test=$((SECONDS - t2))
  local counts
  counts=$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log-ctest.log" | tail -1)
  [ -n "$counts" ] || counts="ctest did not report"

  [ "$status" = ok ] || failed=1
  summary+=("[$name] $status: $detail; $counts (configure $(fmt_time $t_configure), build $(fmt_time $t_build), test $(fmt_time $t_test))")
}

# stage_in_background <stage arguments>: the stage in a background job with BACKGROUND_JOBS
# (default 1) build/test jobs, its output kept in build/logs/<name>-stage.out;
# join_background_stage waits for it, then
# prints that output and takes its summary line (one background stage at a time).
background_pid="" background_name=""
stage_in_background() {
  background_name=$1
  rm -f "build/logs/$1-stage.summary"
  (
    JOBS=${BACKGROUND_JOBS:-1} summary=()
    stage "$@" >"build/logs/$1-stage.out" 2>&1
    printf '%s\n' "${summary[@]}" >"build/logs/$1-stage.summary"
  ) &
  background_pid=$!
  echo
  echo "================ [$1] started in the background (output shown when it ends) ================"
}
join_background_stage() {
  wait "$background_pid"
  cat "build/logs/$background_name-stage.out"
  local line=""
  [ -f "build/logs/$background_name-stage.summary" ] && line=$(cat "build/logs/$background_name-stage.summary")
  [ -n "$line" ] || line="[$background_name] FAILED: the background stage ended without a summary"
  summary+=("$line")
  case "$line" in "[$background_name] ok:"*) ;; *) failed=1 ;; esac
}

# The configurations live in CMakePresets.json (configure, build and test presets of these
# names): Debug + -D_GLIBCXX_ASSERTIONS for gcc (everything but the unit test programs, and the
# benchmarks) and clang, Debug with ASan+UBSan (the unit test programs; not the compiler-only
# compile-fail snippets, nor the model-based programs the fuzz stage runs under the same
# sanitizers), -O1 -g1 with TSan (the multi-threaded
# tests only), and the sanitizer options. docs/testing.md has a table of what each stage runs.
stage gcc "$GCC"
stage clang "$CLANG"
stage gcc-asan "$GCC"

# LLVM's own standard library: clang++-16 -stdlib=libc++ (Debian's libc++ 16, which has no
# <stop_token>, so hookset's own stop_token is used), the tests and the examples, Debug with
# libc++'s assertions. (Catch2 v2 is header-only here: tests/catch_main.cpp builds its runner
# with the same library.)
hookset_deps libc++-16-dev libc++abi-16-dev
LIBCXX_CXX=${HOOKSET_LIBCXX_CXX:-$(pick clang++-16)}
stage clang16-libcxx "$LIBCXX_CXX"

# The oldest supported Boost (1.74: Debian 11's, Ubuntu 22.04's): Debian 12's libboost1.74-dev
# conflicts with the 1.81 installed, so its package is downloaded and unpacked into
# build/boost-1.74 (once) instead of installed; the gcc-boost174 preset points Boost_DIR there.
boost174=build/boost-1.74
if [ ! -f "$boost174/usr/include/boost/version.hpp" ]; then
  rm -rf "$boost174.download" && mkdir -p "$boost174.download"
  if (cd "$boost174.download" && apt-get download libboost1.74-dev >/dev/null 2>&1) &&
     dpkg -x "$boost174.download"/libboost1.74-dev_*.deb "$boost174"; then
    echo "[boost-1.74] unpacked into $boost174"
  else
    echo "[boost-1.74] could not download libboost1.74-dev (apt-get download)"
  fi
  rm -rf "$boost174.download"
fi
if [ -f "$boost174/usr/include/boost/version.hpp" ]; then
  stage gcc-boost174 "$GCC"
else
  summary+=("[gcc-boost174] FAILED: libboost1.74-dev could not be downloaded")
  failed=1
fi

# ThreadSanitizer: only the threading tests. Run without ASLR when possible: GCC 12's and
# LLVM 14's TSan runtimes abort at start-up ("unexpected memory mapping") on kernels that
# randomise mmap with more bits than they expect.
tsan_cxx=${HOOKSET_TSAN_CXX:-$GCC}
case "$tsan_cxx" in *clang*) tsan_stage=clang-tsan ;; *) tsan_stage=gcc-tsan ;; esac
tsan_runner=""
if setarch "$(uname -m)" -R true >/dev/null 2>&1; then tsan_runner="setarch $(uname -m) -R"; fi

# Coverage-guided fuzzing (tests/fuzz): the model-based target built with clang++-16 and
# -fsanitize=fuzzer,address,undefined, run for HOOKSET_FUZZ_SECONDS (default 60) from the seed
# corpus, and every regression input replayed; the same compiler and sanitizers at -O1 also
# build the lifetime, interceptor and cancellation tests (Clang's optimised coroutines are
# where a thread_local address cached across a suspension shows). It runs beside the TSan
# stage, both building with two jobs (each build alone leaves a core idle at its end: the fuzz
# target is one long translation unit); TSan runs its tests one at a time, as their timing
# under TSan is what they check, while the fuzzer runs beside them.
FUZZ_CXX=${HOOKSET_FUZZ_CXX:-$(pick clang++-16)}
BACKGROUND_JOBS=$JOBS stage_in_background fuzz "$FUZZ_CXX"
STAGE_TEST_JOBS=1 STAGE_RUNNER="$tsan_runner" stage "$tsan_stage" "$tsan_cxx"
join_background_stage

echo
echo "================ summary ================"
printf '%s\n' "${summary[@]}"
echo "[total] $(fmt_time $((SECONDS - script_start))) for every stage, downloads and installs included"
if [ "$failed" -ne 0 ]; then
  echo "[test.sh] FAILED (logs in build/logs/)"
  exit 1
fi
echo "[test.sh] all passed"
