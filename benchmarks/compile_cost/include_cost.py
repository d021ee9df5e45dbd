#!/usr/bin/env python3
"""What including hookset costs a user's file: preprocessed lines and -fsyntax-only CPU seconds of
a file that includes only <hookset/slot.hpp>, <hookset/hook_set.hpp> or <hookset/hookset.hpp>,
beside the same figures for the standard headers hookset's interface needs anyway (the baseline:
every file that uses hookset has them). Ratios are header / baseline, measured in one run so the
machine's noise cancels; seconds are the compiler's CPU time (user + system), the median of
--repetitions rounds (each round compiles every row once, so a slow spell touches all alike).

    python3 benchmarks/compile_cost/include_cost.py                      # g++-12 (or g++)
    python3 benchmarks/compile_cost/include_cost.py --compilers g++-12 clang++-14 --repetitions 5
    python3 benchmarks/compile_cost/include_cost.py --include ../before/include include

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


def preprocessed_lines(compiler: str, include: str, source: str) -> int:
    pre = subprocess.run([compiler, "-std=c++20", f"-I{include}", "-E", source],
                         capture_output=True, text=True, check=True)
    return pre.stdout.count("\n")


def syntax_only_seconds(compiler: str, include: str, source: str) -> float:
    before = child_cpu()
    subprocess.run([compiler, "-std=c++20", f"-I{include}", "-fsyntax-only", source], check=True)
    return child_cpu() - before


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
    parser.add_argument("--include", nargs="+", default=[os.path.join(ROOT, "include")],
                        help="hookset's include directory; several: one set of rows each, "
                             "measured in the same run (e.g. before and after a change)")
    parser.add_argument("--repetitions", type=int, default=7)
    args = parser.parse_args()
    compilers = args.compilers or [next((c for c in ("g++-12", "g++") if shutil.which(c)), "g++")]

    with tempfile.TemporaryDirectory(prefix="hookset-include-cost-") as work:
        # Every (compiler, include directory, file) is compiled once per round, round after
        # round, so a slow spell of the machine touches every row alike.
        rows = []
        for compiler in compilers:
            for include in args.include:
                for label, extra in [("the standard baseline", [])] + \
                                    [(f"+ <{h}>", [h]) for h in HEADERS]:
                    source = os.path.join(work, f"tu{len(rows)}.cpp")
                    with open(source, "w") as out:
                        for header in BASELINE + extra:
                            out.write(f"#include <{header}>\n")
                    rows.append({"compiler": compiler, "include": include, "label": label,
                                 "source": source, "seconds": [],
                                 "lines": preprocessed_lines(compiler, include, source)})
        for _ in range(args.repetitions):
            for row in rows:
                row["seconds"].append(syntax_only_seconds(row["compiler"], row["include"],
                                                          row["source"]))

    several = len(args.include) > 1
    print("| compiler |" + (" include directory |" if several else "") +
          " file includes | preprocessed lines | vs baseline | -fsyntax-only CPU s | vs baseline |")
    print("|---|" + ("---|" if several else "") + "---|--:|--:|--:|--:|")
    # One baseline per compiler, pooled over every include directory's baseline row (the same
    # file), so rows of different directories are divided by the same figure.
    baselines = {}
    for row in rows:
        if row["label"] == "the standard baseline":
            lines, samples = baselines.get(row["compiler"], (row["lines"], []))
            baselines[row["compiler"]] = (lines, samples + row["seconds"])
    for row in rows:
        seconds = statistics.median(row["seconds"])
        base = (baselines[row["compiler"]][0], statistics.median(baselines[row["compiler"]][1]))
        where = f" {row['include']} |" if several else ""
        print(f"| {version(row['compiler'])} |{where} {row['label']} | {row['lines']:,} "
              f"| {row['lines'] / base[0]:.2f}x | {seconds:.2f} | {seconds / base[1]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
