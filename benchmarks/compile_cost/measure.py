#!/usr/bin/env python3
"""Measures what hookset costs the compiler: compiles generated translation units of 8, 32, 64
and 128 slots (benchmarks/compile_cost/generate.py) with each compiler, at -O2 -std=c++20
-I include, and prints compile seconds and peak memory as a markdown table, plus the targets
(growth: 128 slots <= 2.1x the 64-slot time; 64 slots <= 8 s and <= 1 GiB with GCC -O2). Three programs per size (--modes):
`mixed` (a HookSet cycling through the slot kinds), `uniform` (a HookSet of slots of one
signature, each registered with a lambda and called once) and `stdfunction` (the uniform program
written with a std::vector<std::function> per slot: the reference the hookset rows are divided by).

    python3 benchmarks/compile_cost/measure.py                       # g++ and clang++, ~3 min
    python3 benchmarks/compile_cost/measure.py --compilers g++-12 --sizes 8 64
    python3 benchmarks/compile_cost/measure.py --modes uniform stdfunction --repetitions 3
    python3 benchmarks/compile_cost/measure.py --quick               # 8 and 32 slots only

Peak memory comes from `/usr/bin/time -v` (Debian package `time`) when present, else from
resource.getrusage(RUSAGE_CHILDREN).ru_maxrss (the largest child so far, which is each compile as
long as sizes grow). Seconds are the compiler's CPU time (user + system: robust against other
load; the compiler is single-threaded) and, for reference, wall-clock time; with --repetitions R
each TU is compiled R times and the medians are reported. Each TU is compiled only (-c); `--run`
also links and runs it (it checks its own results).
Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import generate  # noqa: E402

GIB = 1024 ** 3


# The programs that use hookset (held to the targets); `stdfunction` is their reference.
HOOKSET_MODES = ["mixed", "uniform"]


@dataclass
class Sample:
    compiler: str
    mode: str
    slots: int
    cpu_s: float
    wall_s: float
    peak_bytes: int
    ok: bool
    note: str = ""


def compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, check=False).stdout
    except OSError:
        return cxx
    first = out.splitlines()[0] if out else cxx
    version = re.search(r"(\d+\.\d+(?:\.\d+)?)", first)
    kind = "clang" if "clang" in first.lower() else ("gcc" if re.search(r"g\+\+|gcc", first.lower()) else cxx)
    return f"{kind} {version.group(1)}" if version else first


def parse_time_v(text: str) -> tuple[float, float, int]:
    def seconds(label: str) -> float:
        m = re.search(label + r":\s*([\d.]+)", text)
        return float(m.group(1)) if m else float("nan")
    cpu = seconds(r"User time \(seconds\)") + seconds(r"System time \(seconds\)")
    wall = float("nan")
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\):\s*([\d:.]+)", text)
    if m:
        wall = 0.0
        for part in m.group(1).split(":"):
            wall = wall * 60 + float(part)
    m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
    peak = int(m.group(1)) * 1024 if m else 0
    return cpu, wall, peak


def compile_one(cxx: str, mode: str, slots: int, source: str, output: str, flags: list[str],
                timer: str | None) -> Sample:
    command = [cxx, *flags, "-c", source, "-o", output]
    label = compiler_version(cxx)
    if timer:
        t0 = time.monotonic()
        proc = subprocess.run([timer, "-v", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, check=False)
        wall_fallback = time.monotonic() - t0
        cpu, wall, peak = parse_time_v(proc.stderr)
        if wall != wall:  # NaN: unexpected format
            wall = wall_fallback
        ok = proc.returncode == 0
        errors = proc.stderr
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak = after.ru_maxrss * 1024  # kilobytes on Linux; the largest child so far
        ok = proc.returncode == 0
        errors = proc.stderr
    note = ""
    if not ok:
        lines = [line for line in errors.splitlines() if "error" in line][:3]
        note = " / ".join(lines) or f"exit status {proc.returncode}"
    return Sample(label, mode, slots, cpu, wall, peak, ok, note)


def median_sample(samples: list[Sample]) -> Sample:
    """One sample of repeated compiles: the median time and peak memory (failures win)."""
    failed = [s for s in samples if not s.ok]
    if failed:
        return failed[0]
    first = samples[0]
    return Sample(first.compiler, first.mode, first.slots, statistics.median(s.cpu_s for s in samples),
                  statistics.median(s.wall_s for s in samples),
                  int(statistics.median(s.peak_bytes for s in samples)), True, first.note)


def run_program(cxx: str, source: str, flags: list[str], workdir: str) -> str:
    exe = os.path.join(workdir, os.path.splitext(os.path.basename(source))[0] + ".exe")
    proc = subprocess.run([cxx, *flags, source, "-o", exe], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        return "link failed"
    return "runs ok" if subprocess.run([exe], check=False).returncode == 0 else "WRONG RESULTS"


def verdict(ok) -> str:
    return "n/a " if ok is None else ("PASS" if ok else "MISS")


def linear_verdict(samples: list[Sample], attr: str) -> tuple[bool | None, str]:
    """Linear if the marginal cost per slot of the last step is at most 1.5x that of the first."""
    pts = sorted((s.slots, getattr(s, attr)) for s in samples if s.ok)
    if len(pts) < 3:
        return None, "too few sizes to judge"
    slopes = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(pts, pts[1:])]
    scale = 1.0 if attr != "peak_bytes" else 1 / 2 ** 20
    unit = "s" if attr != "peak_bytes" else "MiB"
    text = ", ".join(f"{a[0]}→{b[0]}: {s * scale * (1000 if unit == 's' else 1):.1f} "
                     f"{'ms' if unit == 's' else unit}/slot"
                     for (a, b, s) in zip(pts, pts[1:], slopes))
    ok = slopes[-1] <= 1.5 * slopes[0] if slopes[0] > 0 else True
    return ok, text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure hookset's compile cost.")
    parser.add_argument("--compilers", nargs="+", default=None,
                        help="compilers to use (default: g++ and clang++)")
    parser.add_argument("--sizes", nargs="+", type=int, default=None, help="slot counts (default 8 32 64 128)")
    parser.add_argument("--quick", action="store_true", help="8 and 32 slots only")
    parser.add_argument("--modes", nargs="+", choices=generate.MODES, default=None,
                        help=f"programs to compile (default: {' '.join(generate.MODES)})")
    parser.add_argument("--repetitions", type=int, default=1,
                        help="compiles of each TU; medians are reported (default 1)")
    parser.add_argument("--include", default=os.path.join(ROOT, "include"), help="hookset's include directory")
    parser.add_argument("--extra-flags", default="", help="more compiler flags, space-separated")
    parser.add_argument("--run", action="store_true", help="also link and run each TU (self-check)")
    parser.add_argument("--keep", help="keep the generated sources in this directory")
    args = parser.parse_args(argv)

    sizes = args.sizes or ([8, 32] if args.quick else [8, 32, 64, 128])
    modes = args.modes or list(generate.MODES)
    repetitions = max(1, args.repetitions)
    compilers = args.compilers or [c for c in ("g++", "clang++") if shutil.which(c)]
    flags = ["-O2", "-std=c++20", "-I", args.include, *args.extra_flags.split()]
    timer = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

    workdir = args.keep or tempfile.mkdtemp(prefix="hookset-compile-cost-")
    os.makedirs(workdir, exist_ok=True)
    status = 0
    samples: list[Sample] = []
    try:
        sources = {}
        for mode in modes:
            for n in sizes:
                sources[mode, n] = os.path.join(workdir, f"{mode}_{n}.cpp")
                with open(sources[mode, n], "w", encoding="utf-8") as f:
                    f.write(generate.generate(n, mode))
        for cxx in compilers:
            for mode in modes:
                for n in sizes:
                    print(f"[compile-cost] {cxx}: {mode}, {n} slots ...", file=sys.stderr, flush=True)
                    source, obj = sources[mode, n], os.path.join(workdir, f"{mode}_{n}.o")
                    sample = median_sample([compile_one(cxx, mode, n, source, obj, flags, timer)
                                            for _ in range(repetitions)])
                    if sample.ok and args.run:
                        sample.note = run_program(cxx, source, flags, workdir)
                        sample.ok = sample.note == "runs ok"
                    if not sample.ok:
                        status = 1
                    samples.append(sample)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    def reference(s: Sample) -> Sample | None:
        return next((r for r in samples if r.mode == "stdfunction" and r.compiler == s.compiler
                     and r.slots == s.slots and r.ok), None)

    print(f"## compile cost: N slots, every slot registered and called "
          f"(`{' '.join(['-O2', '-std=c++20', '-I include', *args.extra_flags.split()])}`, compile only"
          + (f", medians of {repetitions} compiles" if repetitions > 1 else "") + ")")
    print()
    print("Modes: `mixed` HookSet of every slot kind, `uniform` HookSet of one signature, `stdfunction` "
          "the uniform program with std::vector<std::function> (the reference: `vs std::function` is "
          "CPU time / its CPU time).")
    print()
    print("| compiler | mode | slots | CPU s | wall s | peak MiB | per slot (CPU ms) | vs std::function | |")
    print("|---|---|--:|--:|--:|--:|--:|--:|---|")
    for s in samples:
        per_slot = s.cpu_s / s.slots * 1000 if s.slots else float("nan")
        ref = reference(s)
        vs = f"{s.cpu_s / ref.cpu_s:.1f}x" if ref and s.mode != "stdfunction" and ref.cpu_s > 0 else "–"
        print(f"| {s.compiler} | {s.mode} | {s.slots} | {s.cpu_s:.1f} | {s.wall_s:.1f} | "
              f"{s.peak_bytes / 2 ** 20:.0f} | {per_slot:.0f} | {vs} | "
              f"{'ok' if s.ok else 'FAILED'}{(': ' + s.note) if s.note else ''} |")
    print()
    print("Peak memory from " + ("/usr/bin/time -v" if timer else "getrusage(RUSAGE_CHILDREN).ru_maxrss") + ".")
    print()
    print("### compile-cost targets")
    print()
    for label in dict.fromkeys(s.compiler for s in samples):
        for mode in [m for m in HOOKSET_MODES if m in modes]:
            mine = [s for s in samples if s.compiler == label and s.mode == mode]
            _, text_t = linear_verdict(mine, "cpu_s")
            _, text_m = linear_verdict(mine, "peak_bytes")
            print(f"- info {label} {mode}: marginal compile time ({text_t})")
            print(f"- info {label} {mode}: marginal peak memory ({text_m})")
            at64 = next((s for s in mine if s.slots == 64 and s.ok), None)
            at128 = next((s for s in mine if s.slots == 128 and s.ok), None)
            if at64 and at128:
                growth = at128.cpu_s / at64.cpu_s
                print(f"- {'PASS' if growth <= 2.1 else 'MISS'} {label} {mode}: growth, 128 slots "
                      f"{at128.cpu_s:.1f} s = {growth:.2f}x the 64 slots' {at64.cpu_s:.1f} s "
                      f"(target ≤ 2.1x: linear)")
            if label.startswith("gcc") and at64:
                print(f"- {'PASS' if at64.cpu_s <= 8 else 'MISS'} {label} {mode}: 64 slots -O2 time: "
                      f"{at64.cpu_s:.1f} s CPU ({at64.wall_s:.1f} s wall) (target ≤ 8 s)")
                print(f"- {'PASS' if at64.peak_bytes <= GIB else 'MISS'} {label} {mode}: 64 slots "
                      f"-O2 memory: {at64.peak_bytes / GIB:.2f} GiB (target ≤ 1 GiB)")
            largest = max((s for s in mine if s.ok and reference(s)), key=lambda s: s.slots, default=None)
            if largest:
                ref = reference(largest)
                print(f"- info {label} {mode}: {largest.slots} slots cost {largest.cpu_s:.1f} s CPU, "
                      f"{largest.cpu_s / ref.cpu_s:.1f}x the std::function program's {ref.cpu_s:.1f} s; "
                      f"{largest.peak_bytes / 2 ** 20:.0f} vs {ref.peak_bytes / 2 ** 20:.0f} MiB")
    return status


if __name__ == "__main__":
    sys.exit(main())
