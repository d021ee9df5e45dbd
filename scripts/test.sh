#!/usr/bin/env bash
# hookset's test command: every test, with GCC and Clang, then GCC with ASan+UBSan, then the
# threading tests with ThreadSanitizer.
#
#   bash scripts/test.sh
#
# Installs missing Debian packages first (when root). Build trees: build/gcc, build/clang,
# build/gcc-asan, build/gcc-tsan (reused between runs, so a second run only rebuilds what
# changed). Every stage runs even if an earlier one failed; the exit status is non-zero if
# anything failed.
#
# Build type: Debug (-O0 -g) for the GCC and Clang trees, because compile time dominates (the
# tests are template/coroutine heavy and quick to run) and -O0 is the fastest to compile and the
# easiest to debug; plus -D_GLIBCXX_ASSERTIONS (bounds-checked std containers, no ABI change).
# The sanitizer tree uses -O1 -g (asserts kept): the usual ASan setting, and it exercises the
# optimised coroutine code paths that -O0 does not. scripts/main.sh builds everything at -O2.
#
# The ThreadSanitizer tree builds only the tests under tests/threads/ (the only multi-threaded
# ones; TSan cannot find anything in single-threaded code) and runs the CTest tests named
# threads/..., at -O1 -g like the ASan tree. Any TSan report fails the stage (TSan exits 66).
#
# Environment: HOOKSET_GCC / HOOKSET_CLANG pick the compilers (default g++-12 / clang++-14 when
# present, else g++ / clang++); HOOKSET_TSAN_CXX the ThreadSanitizer stage's (default: the GCC;
# Clang 14's TSan runs these tests clean too); HOOKSET_JOBS the parallelism (default 2);
# HOOKSET_SEED the seed of the model-based randomized tests (tests/model/).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

source scripts/deps.sh
hookset_deps

pick() { for c in "$@"; do if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi; done; echo "$1"; }
GCC=${HOOKSET_GCC:-$(pick g++-12 g++)}
CLANG=${HOOKSET_CLANG:-$(pick clang++-14 clang++)}
JOBS=${HOOKSET_JOBS:-2}

mkdir -p build/logs
summary=()
failed=0
script_start=$SECONDS

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# stage <name> <compiler> "<ctest args>" <cmake -D args...>
#   STAGE_TARGETS="t1 t2": build only these targets (default: everything)
#   STAGE_RUNNER="cmd args": run ctest under this command
stage() {
  local name=$1 cxx=$2 ctest_args=$3
  shift 3
  local dir=build/$name log=build/logs/$name t0=$SECONDS status=ok detail=""
  echo
  echo "================ [$name] $cxx -> $dir ================"

  local configure=(cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "$@")
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
  grep -v -E '^-- (Configuring done|Generating done|Build files have)' "$log-configure.log" || true
  local t_configure=$((SECONDS - t0))

  # -k 0: build everything that can be built, so one broken file does not hide the other results.
  local t1=$SECONDS targets=()
  for t in ${STAGE_TARGETS:-}; do targets+=(--target "$t"); done
  if cmake --build "$dir" -j "$JOBS" "${targets[@]}" -- -k 0 2>&1 | tee "$log-build.log"; then
    detail="build ok"
  else
    status=FAILED
    detail="build FAILED ($(grep -c '^FAILED: ' "$log-build.log") steps)"
  fi
  local t_build=$((SECONDS - t1))

  local t2=$SECONDS
  # shellcheck disable=SC2086  # ctest_args is a word list on purpose
  # shellcheck disable=SC2086  # so is STAGE_RUNNER
  if ${STAGE_RUNNER:-} ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$JOBS" $ctest_args 2>&1 | tee "$log-ctest.log"; then
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

stage gcc "$GCC" "" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-D_GLIBCXX_ASSERTIONS \
  -DHOOKSET_BUILD_TESTS=ON -DHOOKSET_BUILD_EXAMPLES=ON -DHOOKSET_BUILD_BENCHMARKS=ON \
  -DHOOKSET_SANITIZE=

stage clang "$CLANG" "" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-D_GLIBCXX_ASSERTIONS \
  -DHOOKSET_BUILD_TESTS=ON -DHOOKSET_BUILD_EXAMPLES=ON -DHOOKSET_BUILD_BENCHMARKS=OFF \
  -DHOOKSET_SANITIZE=

# Sanitizers: the compile-fail snippets are compiler-only (already run by the gcc stage).
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
stage gcc-asan "$GCC" "-LE compile_fail" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
  -DHOOKSET_BUILD_TESTS=ON -DHOOKSET_BUILD_EXAMPLES=ON -DHOOKSET_BUILD_BENCHMARKS=OFF \
  -DHOOKSET_SANITIZE=address,undefined

# ThreadSanitizer: only the threading tests. Run without ASLR when possible: GCC 12's and
# LLVM 14's TSan runtimes abort at start-up ("unexpected memory mapping") on kernels that
# randomise mmap with more bits than they expect.
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
tsan_targets=""
for src in tests/threads/*.cpp; do
  tsan_targets+=" test_threads_$(basename "$src" .cpp)"
done
tsan_cxx=${HOOKSET_TSAN_CXX:-$GCC}
case "$tsan_cxx" in *clang*) tsan_stage=clang-tsan ;; *) tsan_stage=gcc-tsan ;; esac
tsan_runner=""
if setarch "$(uname -m)" -R true >/dev/null 2>&1; then tsan_runner="setarch $(uname -m) -R"; fi
STAGE_TARGETS="$tsan_targets" STAGE_RUNNER="$tsan_runner" \
stage "$tsan_stage" "$tsan_cxx" "-R ^threads/" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
  -DHOOKSET_BUILD_TESTS=ON -DHOOKSET_BUILD_EXAMPLES=OFF -DHOOKSET_BUILD_BENCHMARKS=OFF \
  -DHOOKSET_SANITIZE=thread

echo
echo "================ summary ($(fmt_time $((SECONDS - script_start))) total) ================"
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  echo "[test.sh] FAILED (logs in build/logs/)"
  exit 1
fi
echo "[test.sh] all passed"
