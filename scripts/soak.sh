#!/usr/bin/env bash
# The soak tests at full size, under AddressSanitizer+UBSan (leaks checked) and under
# ThreadSanitizer, in the gcc-asan and gcc-tsan trees of scripts/test.sh (which runs the same
# tests scaled down on every run): tests/soak/soak.cpp with HOOKSET_SOAK_DISPATCHES dispatches
# (default 1,000,000) on a two-thread io_context, and tests/guards/tripwire_random.cpp with
# HOOKSET_GUARDS_ITERATIONS random tripwire schedules (default 1,000,000).
#
#   bash scripts/soak.sh                       # both sanitizers, 1,000,000 dispatches each
#   HOOKSET_SOAK_DISPATCHES=200000 bash scripts/soak.sh
#   HOOKSET_SOAK_SANITIZERS=asan bash scripts/soak.sh   # only one of asan, tsan
#
# HOOKSET_SEED picks the random sequence (the test prints the seed it used). Exit status is
# non-zero if either run failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

source scripts/deps.sh
hookset_deps

export HOOKSET_SOAK_DISPATCHES=${HOOKSET_SOAK_DISPATCHES:-1000000}
export HOOKSET_GUARDS_ITERATIONS=${HOOKSET_GUARDS_ITERATIONS:-1000000}
JOBS=${HOOKSET_JOBS:-2}
failed=0
summary=()

for sanitizer in ${HOOKSET_SOAK_SANITIZERS:-asan tsan}; do
  preset=gcc-$sanitizer
  t0=$SECONDS
  echo
  echo "================ [$preset] soak, $HOOKSET_SOAK_DISPATCHES dispatches ================"
  if ! cmake --preset "$preset" >/dev/null ||
     ! cmake --build "build/$preset" -j "$JOBS" --target test_soak_soak test_guards_tripwire_random; then
    summary+=("[$preset] build FAILED"); failed=1; continue
  fi
  runner=()
  # As in scripts/test.sh: TSan runtimes of this age need ASLR off on some kernels.
  if [ "$sanitizer" = tsan ] && setarch "$(uname -m)" -R true >/dev/null 2>&1; then
    runner=(setarch "$(uname -m)" -R)
  fi
  # The presets' sanitizer options (leak detection, halt on the first report).
  export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  if "${runner[@]}" "build/$preset/tests/bin/test_soak_soak" --durations yes; then
    summary+=("[$preset] soak ok ($((SECONDS - t0)) s)")
  else
    summary+=("[$preset] soak FAILED ($((SECONDS - t0)) s)"); failed=1
  fi
  t1=$SECONDS
  echo "---- [$preset] tripwire schedules, $HOOKSET_GUARDS_ITERATIONS iterations"
  if "${runner[@]}" "build/$preset/tests/bin/test_guards_tripwire_random" --durations yes; then
    summary+=("[$preset] tripwire schedules ok ($((SECONDS - t1)) s)")
  else
    summary+=("[$preset] tripwire schedules FAILED ($((SECONDS - t1)) s)"); failed=1
  fi
done

echo
printf '%s\n' "${summary[@]}"
exit "$failed"
