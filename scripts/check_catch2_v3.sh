#!/usr/bin/env bash
# Runs hookset's whole CTest suite against Catch2 v3 (Debian 12 ships v2, which the other scripts
# use), to check the test setup works with both major versions.
#
#   bash scripts/check_catch2_v3.sh <catch2-v3-install-prefix>
#   bash scripts/check_catch2_v3.sh <catch2-v3-source-dir>
#
# A source directory (Catch2's own, e.g. `git archive v3.7.1` of github.com/catchorg/Catch2) is
# first built and installed to a scratch prefix under ${TMPDIR:-/tmp} (C++20, the same compiler;
# nothing is written into hookset's tree but build/). Then hookset is configured like the `gcc`
# preset (Debug, -D_GLIBCXX_ASSERTIONS, tests and examples), every unit test program included,
# in build/catch2-v3 with -DCMAKE_PREFIX_PATH=<prefix>, built, and its whole CTest suite run. The check fails if the
# configure did not pick Catch2 3.x, if anything fails to build, or if a test fails, except the
# tests named in HOOKSET_EXPECTED_FAILURES (a regex for `ctest -E`, default none).
#
# Environment: HOOKSET_GCC (default g++-12, else g++), HOOKSET_JOBS (default 2).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

if [ $# -ne 1 ]; then
  sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
given=$(cd "$1" 2>/dev/null && pwd) || { echo "check_catch2_v3.sh: no directory $1" >&2; exit 2; }

pick() { for c in "$@"; do if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi; done; echo "$1"; }
CXX=${HOOKSET_GCC:-$(pick g++-12 g++)}
JOBS=${HOOKSET_JOBS:-2}
dir=build/catch2-v3
mkdir -p build/logs
log=build/logs/catch2-v3

find_config() { find "$1" -path '*/cmake/Catch2/Catch2Config.cmake' -print -quit 2>/dev/null; }

if [ -f "$given/CMakeLists.txt" ] && [ -d "$given/src/catch2" ]; then
  version=$(sed -n 's/^ *VERSION \([0-9][0-9.]*\).*/\1/p' "$given/CMakeLists.txt" | head -1)
  case "$version" in 3.*) ;; *) echo "check_catch2_v3.sh: $given is Catch2 '${version:-?}', not 3.x" >&2; exit 2 ;; esac
  prefix=${TMPDIR:-/tmp}/hookset-catch2-$version
  if [ -z "$(find_config "$prefix")" ]; then
    echo "==== building Catch2 $version from $given into $prefix"
    catch_build=${TMPDIR:-/tmp}/hookset-catch2-$version-build
    if ! cmake -S "$given" -B "$catch_build" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" \
           -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 -DBUILD_TESTING=OFF \
           -DCATCH_INSTALL_DOCS=OFF -DCATCH_INSTALL_EXTRAS=ON \
           -DCMAKE_INSTALL_PREFIX="$prefix" >"$log-catch2-configure.log" 2>&1 ||
       ! cmake --build "$catch_build" -j "$JOBS" >"$log-catch2-build.log" 2>&1 ||
       ! cmake --install "$catch_build" >"$log-catch2-install.log" 2>&1; then
      echo "check_catch2_v3.sh: building Catch2 failed; see $log-catch2-*.log" >&2
      exit 1
    fi
  else
    echo "==== Catch2 $version already installed in $prefix"
  fi
elif [ -n "$(find_config "$given")" ]; then
  prefix=$given
else
  echo "check_catch2_v3.sh: $given is neither a Catch2 source tree nor an install prefix" >&2
  exit 2
fi

echo "==== hookset with Catch2 from $prefix -> $dir"
# Every unit test program too (the gcc preset itself leaves them to gcc-asan).
configure=(cmake --preset gcc -B "$dir" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_PREFIX_PATH="$prefix"
           -DHOOKSET_UNIT_TESTS_ONLY=)
if ! "${configure[@]}" >"$log-configure.log" 2>&1; then
  rm -rf "$dir"
  if ! "${configure[@]}" >"$log-configure.log" 2>&1; then
    cat "$log-configure.log"
    echo "[catch2-v3] FAILED at configure"
    exit 1
  fi
fi
found=$(grep -o 'hookset: tests use Catch2 [0-9.]*' "$log-configure.log" | tail -1)
echo "$found"
case "$found" in
  *"Catch2 3."*) ;;
  *) echo "[catch2-v3] FAILED: the configure did not pick Catch2 3.x from $prefix"; exit 1 ;;
esac

status=0
if ! cmake --build "$dir" -j "$JOBS" -- -k 0 >"$log-build.log" 2>&1; then
  grep -E '^FAILED:|error:' "$log-build.log" | head -40
  echo "[catch2-v3] build FAILED (log: $log-build.log)"
  status=1
fi

exclude=()
[ -n "${HOOKSET_EXPECTED_FAILURES:-}" ] && exclude=(-E "$HOOKSET_EXPECTED_FAILURES")
ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$JOBS" "${exclude[@]}" >"$log-ctest.log" 2>&1 || status=1
grep -E '^[0-9]+% tests passed|^The following tests FAILED|^\s+[0-9]+ - ' "$log-ctest.log"

# The protection against CTest tests that match no TEST_CASE, with v3's spelling: a name that
# matches nothing must fail (catch2/unmatched_name_fails checks it inside the suite, too).
exe=$(find "$dir/tests/bin" -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort | head -1)
if [ -n "$exe" ]; then
  "$exe" "hookset: no test case has this name" -w UnmatchedTestSpec >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "unmatched test name: $(basename "$exe") exits $rc (fails, as it must)"
  else
    echo "[catch2-v3] FAILED: a test name matching no test case passed"; status=1
  fi
  "$exe" "hookset: no test case has this name" -w NoTests >/dev/null 2>&1
  echo "v2's '-w NoTests' under v3: exit $? (rejected: Unrecognised warning option)"
fi

if [ "$status" -ne 0 ]; then
  echo "[catch2-v3] FAILED (logs: $log-*.log)"
  exit 1
fi
echo "[catch2-v3] ok: $found, every test passed"
