#!/usr/bin/env bash
# Formats hookset's C++ files with clang-format (.clang-format at the root), or checks them.
#
#   bash scripts/format.sh            reformat every checked file in place
#   bash scripts/format.sh --check    change nothing; print a diff per unformatted file and exit 1
#   bash scripts/format.sh [--check] FILE...   only these files (excluded ones too)
#
# Checked files: the repository's C++ files (*.cpp, *.hpp, *.h, *.cc, *.ipp; tracked or new, from
# `git ls-files` when there is a git work tree, else every such file outside build/), minus
# those matching FORMAT_EXCLUDE below. CTest's `format/check` (label `format`) runs --check.
#
# Environment:
#   HOOKSET_CLANG_FORMAT     the clang-format program (default: clang-format-14, else clang-format)
#   HOOKSET_FORMAT_EXCLUDE   space-separated glob patterns, relative to the root, replacing
#                            FORMAT_EXCLUDE (an empty string checks everything)
#
# Exit status: 0 formatted (or reformatted), 1 unformatted files found by --check, 2 usage or
# clang-format error, 77 --check skipped (no clang-format, or another major version than the
# reference one: other versions format some constructs differently).
set -uo pipefail

# Not checked: the compile-fail snippets, whose `// EXPECT:` comment lines are data (patterns the
# compiler's output must match) that comment reflowing would break.
FORMAT_EXCLUDE=("tests/compile_fail/*")
REFERENCE_MAJOR=14

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 2
cd "$root" || exit 2

check=0
files=()
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "format.sh: unknown option $arg" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done

if [ -n "${HOOKSET_FORMAT_EXCLUDE+set}" ]; then
  read -r -a FORMAT_EXCLUDE <<<"$HOOKSET_FORMAT_EXCLUDE"
fi

clang_format=${HOOKSET_CLANG_FORMAT:-}
if [ -z "$clang_format" ]; then
  for candidate in "clang-format-$REFERENCE_MAJOR" clang-format; do
    if command -v "$candidate" >/dev/null 2>&1; then clang_format=$candidate; break; fi
  done
fi
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "format.sh: clang-format not found (install clang-format-$REFERENCE_MAJOR, or set HOOKSET_CLANG_FORMAT)" >&2
  [ "$check" -eq 1 ] && { echo "HOOKSET_SKIP: no clang-format"; exit 77; }
  exit 2
fi
version=$("$clang_format" --version 2>/dev/null | grep -Eo 'version [0-9]+' | head -1 | grep -Eo '[0-9]+')
if [ "${version:-0}" != "$REFERENCE_MAJOR" ]; then
  echo "format.sh: $clang_format is version ${version:-unknown}; the reference is $REFERENCE_MAJOR" >&2
  [ "$check" -eq 1 ] && { echo "HOOKSET_SKIP: clang-format ${version:-unknown} is not $REFERENCE_MAJOR"; exit 77; }
fi

if [ "${#files[@]}" -eq 0 ]; then
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    listing=$(git ls-files --cached --others --exclude-standard -- \
                '*.cpp' '*.hpp' '*.h' '*.cc' '*.ipp')
  else
    listing=$(find . -path ./build -prune -o -path ./.git -prune -o -type f \
                \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' -o -name '*.ipp' \) \
                -print | sed 's|^\./||')
  fi
  while IFS= read -r file; do
    [ -n "$file" ] && [ -f "$file" ] || continue
    excluded=0
    for pattern in "${FORMAT_EXCLUDE[@]}"; do
      # shellcheck disable=SC2053  # a glob on purpose
      if [[ "$file" == $pattern ]]; then excluded=1; break; fi
    done
    [ "$excluded" -eq 0 ] && files+=("$file")
  done < <(printf '%s\n' "$listing" | LC_ALL=C sort)
fi

if [ "${#files[@]}" -eq 0 ]; then
  echo "format.sh: no files to format"
  exit 0
fi

status=0
unformatted=()
formatted=$(mktemp) || exit 2
trap 'rm -f "$formatted"' EXIT
for file in "${files[@]}"; do
  if [ "$check" -eq 1 ]; then
    if ! "$clang_format" --style=file "$file" >"$formatted"; then
      echo "format.sh: $clang_format failed on $file" >&2; status=2; continue
    fi
    if ! diff -u --label "$file" --label "$file (formatted)" "$file" "$formatted"; then
      unformatted+=("$file")
    fi
  elif ! "$clang_format" --style=file -i "$file"; then
    echo "format.sh: $clang_format failed on $file" >&2; status=2
  fi
done

if [ "$check" -eq 1 ]; then
  if [ "${#unformatted[@]}" -ne 0 ]; then
    echo
    echo "format.sh: ${#unformatted[@]} of ${#files[@]} files are not formatted ($clang_format):"
    printf '  %s\n' "${unformatted[@]}"
    echo "Run: bash scripts/format.sh"
    [ "$status" -eq 0 ] && status=1
  else
    [ "$status" -eq 0 ] && echo "format.sh: ${#files[@]} files formatted ($clang_format)"
  fi
else
  [ "$status" -eq 0 ] && echo "format.sh: formatted ${#files[@]} files ($clang_format)"
fi
exit "$status"
