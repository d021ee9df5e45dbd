#!/usr/bin/env python3
"""What including hookset costs a user's file: preprocessed lines and -fsyntax-only CPU seconds of
a file that includes only <hookset/slot.hpp>, <hookset/hook_set.hpp> or <hookset/hookset.hpp>,
beside the same figures for the standard headers hookset's interface needs anyway (the baseline:
every file that uses hookset has them). Ratios are header / baseline, measured in one run so the
machine's noise cancels; seconds are the compiler's CPU time (user + system), the median of
--repetitions runs.

    python3 benchmarks/compile_cost/include_cost.py                      # g++-12 (or g++)
    python3 benchmarks/compile_cost/include_cost.py --compilers g++-12 clang++-14 --repetitions 5
    python3 benchmarks/compile_cost/include_cost.py --include /path/to/other/checkout/include

The CTest test budget/includes (tests/budget/include_budget.cmake) holds the line counts to a
recorded budget; this script is its measuring tape. Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Keep in step with tests/budget/include_budget.cmake.
BASELINE = ["vector", "memory", "coroutine", "atomic", "optional", "string_view", "chrono",
            "stop_token", "exception", "stdexcept", "string"]
HEADERS = ["hookset/slot.hpp", "hookset/hook_set.hpp", "hookset/hookset.hpp"]


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(compiler: str, include: str, source: str, repetitions: int) -> tuple[int, float]:
    flags = [compiler, "-std=c++20", f"-I{include}"]
    pre = subprocess.run(flags + ["-E", source], capture_output=True, text=True, check=True)
    lines = pre.stdout.count("\n")
    seconds = []
    for _ in range(repetitions):
        before = child_cpu()
        subprocess.run(flags + ["-fsyntax-only", source], check=True)
        seconds.append(child_cpu() - before)
    return lines, statistics.median(seconds)


def version(compiler: str) -> str:
    first = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    name = "clang" if "clang" in os.path.basename(compiler) else "gcc"
    for word in (first.splitlines() or [""])[0].split():
        if word[:1].isdigit() and word.count(".") == 2:
            return f"{name} {word.split('-')[0]}"
    return compiler


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compilers", nargs="+", default=None)
    parser.add_argument("--include", default=os.path.join(ROOT, "include"),
                        help="hookset's include directory")
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    compilers = args.compilers or [next((c for c in ("g++-12", "g++") if shutil.which(c)), "g++")]

    print("| compiler | file includes | preprocessed lines | vs baseline | -fsyntax-only CPU s"
          " | vs baseline |")
    print("|---|---|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory(prefix="hookset-include-cost-") as work:
        for compiler in compilers:
            rows = [("the standard baseline", [])] + [(f"+ <{h}>", [h]) for h in HEADERS]
            base_lines = base_seconds = None
            for label, extra in rows:
                source = os.path.join(work, f"tu{len(extra)}_{abs(hash(label))}.cpp")
                with open(source, "w") as out:
                    for header in BASELINE + extra:
                        out.write(f"#include <{header}>\n")
                lines, seconds = measure(compiler, args.include, source, args.repetitions)
                if base_lines is None:
                    base_lines, base_seconds = lines, seconds
                print(f"| {version(compiler)} | {label} | {lines:,} | {lines / base_lines:.2f}x "
                      f"| {seconds:.2f} | {seconds / base_seconds:.2f}x |")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
