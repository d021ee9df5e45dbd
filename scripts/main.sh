#!/usr/bin/env bash
# hookset's main job: Release builds (-O2 -DNDEBUG) of the examples and benchmarks with GCC and
# Clang, then runs every example and the benchmarks, and redraws the picture of
# docs/performance.md.
#
#   bash scripts/main.sh
#
# Installs missing Debian packages first (when root; scripts/deps.sh hookset_main_deps, which
# adds python3-matplotlib). Build trees: build/release-gcc and build/release-clang. The benchmark
# tables come from benchmarks/report.py when it exists
# (`python3 benchmarks/report.py --compile-cost build/release-gcc build/release-clang`: the
# dispatch table, the targets, the compile-cost table, then compile cost against Boost.Signals2
# and libsigc++ 3 at -O2, one round, ~2-3 min; its medians also go to
# build/benchmarks.json); otherwise every benchmark program is run and its output printed. Then
# the instruction-count table (benchmarks/instructions.py, valgrind's callgrind; the counts also
# go to build/instructions.json). Last, benchmarks/plot.py draws docs/dispatch_overhead.svg
# (instructions and time per dispatch against the number of hooks) from those two files:
# deterministic, so an unchanged tree after a run means nothing moved. Exit status is non-zero
# if anything failed, the plot included.
#
# Warnings are not errors here (HOOKSET_WERROR=OFF): this job is the demo, and an optimiser-only
# false-positive warning should not stop it. scripts/test.sh is the strict gate.
#
# The two configurations are the presets release-gcc and release-clang of CMakePresets.json
# (`cmake --preset release-gcc && cmake --build --preset release-gcc` builds one by hand).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

source scripts/deps.sh
hookset_main_deps

pick() { for c in "$@"; do if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi; done; echo "$1"; }
GCC=${HOOKSET_GCC:-$(pick g++-12 g++)}
CLANG=${HOOKSET_CLANG:-$(pick clang++-14 clang++)}
JOBS=${HOOKSET_JOBS:-2}

failed=0
summary=()
built_dirs=()
script_start=$SECONDS

for entry in "gcc:$GCC" "clang:$CLANG"; do
  name=release-${entry%%:*}
  cxx=${entry#*:}
  dir=build/$name
  t0=$SECONDS
  echo
  echo "================ [$name] build with $cxx ================"
  # The preset's flags (-O2 -DNDEBUG, examples and benchmarks, no tests, no -Werror); the
  # compiler picked above.
  configure=(cmake --preset "$name" -DCMAKE_CXX_COMPILER="$cxx")
  if ! "${configure[@]}" >/dev/null 2>&1; then
    rm -rf "$dir"   # e.g. a stale cache from another compiler: start clean once
    if ! "${configure[@]}"; then
      summary+=("[$name] FAILED at configure"); failed=1; continue
    fi
  fi
  if cmake --build --preset "$name" -j "$JOBS"; then  # -k 0 is in the preset
    summary+=("[$name] build ok ($((SECONDS - t0))s)")
  else
    summary+=("[$name] build FAILED ($((SECONDS - t0))s)"); failed=1
  fi
  built_dirs+=("$dir")
done

# Every example, from each build.
for dir in "${built_dirs[@]}"; do
  [ -f "$dir/examples/examples.list" ] || continue
  while IFS= read -r exe; do
    [ -n "$exe" ] || continue
    echo
    echo "================ example $(basename "$exe") [$(basename "$dir")] ================"
    if [ ! -x "$exe" ]; then
      echo "(not built)"; summary+=("[$(basename "$dir")] example $(basename "$exe") NOT BUILT"); failed=1
    elif "$exe" </dev/null; then
      summary+=("[$(basename "$dir")] example $(basename "$exe") ok")
    else
      rc=$?; summary+=("[$(basename "$dir")] example $(basename "$exe") FAILED (exit $rc)"); failed=1
    fi
  done <"$dir/examples/examples.list"
done

# Benchmarks.
echo
echo "================ benchmarks ================"
# The data the plot is drawn from: never a previous run's.
times_json=build/benchmarks.json
instructions_json=build/instructions.json
mkdir -p build && rm -f "$times_json" "$instructions_json"
if [ -f benchmarks/report.py ]; then
  # The dispatch table, then the compile-cost tables (benchmarks/compile_cost/measure.py and
  # peers.py).
  if python3 benchmarks/report.py --compile-cost --json-out "$times_json" "${built_dirs[@]}"; then
    summary+=("benchmarks/report.py ok")
  else
    summary+=("benchmarks/report.py FAILED"); failed=1
  fi
else
  for dir in "${built_dirs[@]}"; do
    [ -f "$dir/benchmarks/benchmarks.list" ] || continue
    while IFS= read -r exe; do
      [ -n "$exe" ] || continue
      echo
      echo "---------------- $(basename "$exe") [$(basename "$dir")] ----------------"
      if [ -x "$exe" ] && "$exe" </dev/null; then
        summary+=("[$(basename "$dir")] benchmark $(basename "$exe") ok")
      else
        summary+=("[$(basename "$dir")] benchmark $(basename "$exe") FAILED"); failed=1
      fi
    done <"$dir/benchmarks/benchmarks.list"
  done
fi

# Instructions per dispatch (callgrind; deterministic where the time table moves +-20 %), with
# the targets marked PASS or MISS.
echo
echo "================ instructions per dispatch (callgrind) ================"
if ! command -v valgrind >/dev/null 2>&1; then hookset_deps valgrind; fi
if command -v valgrind >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
  if python3 benchmarks/instructions.py --k 1000 --jobs "$JOBS" --json "$instructions_json" \
       "${built_dirs[@]}"; then
    summary+=("benchmarks/instructions.py ok")
  else
    summary+=("benchmarks/instructions.py FAILED"); failed=1
  fi
else
  summary+=("benchmarks/instructions.py SKIPPED (no valgrind or python3)")
fi

# The picture of docs/performance.md: instructions and time per dispatch of the Always fold
# against the number of hooks, hookset beside the std::function loop, Signals2 and libsigc++.
echo
echo "================ plot: docs/dispatch_overhead.svg ================"
# Debian's python3-matplotlib is Debian's interpreter's: use that one when the python3 on PATH
# (a virtualenv, pyenv) has no matplotlib.
plot_python=python3
if ! python3 -c 'import matplotlib' >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
  plot_python=/usr/bin/python3
fi
if [ ! -f "$times_json" ] || [ ! -f "$instructions_json" ]; then
  # The step that did not produce its data has already failed the job (or was skipped).
  summary+=("benchmarks/plot.py SKIPPED (no $times_json or no $instructions_json)")
elif "$plot_python" benchmarks/plot.py --instructions "$instructions_json" --times "$times_json" \
       -o docs/dispatch_overhead.svg; then
  summary+=("benchmarks/plot.py ok (docs/dispatch_overhead.svg)")
else
  summary+=("benchmarks/plot.py FAILED"); failed=1
fi

echo
echo "================ summary ($((SECONDS - script_start))s total) ================"
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  echo "[main.sh] FAILED"
  exit 1
fi
echo "[main.sh] ok"
