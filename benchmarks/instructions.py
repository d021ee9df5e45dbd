#!/usr/bin/env python3
"""Instructions per dispatch, counted with callgrind: deterministic where timings on a shared VM
move +-20 % between runs, so every change to the dispatch path is judged by this table first.

    python3 benchmarks/instructions.py [--k K] [--jobs J] [--only SCENARIO] [--json FILE] BUILD_DIR...

For every scenario of <build>/benchmarks/bin/dispatch_instructions (its `list`), runs the program
under `valgrind --tool=callgrind` with K dispatches and with 0, and reports
(instructions(K) - instructions(0)) / K: the set-up, the warm-up dispatch, process start and exit
cancel out. Prints one table per build tree (its compiler from bench_info.json), then the targets
with PASS or MISS. `--json FILE` also writes every count, with the compilers and the machine
(benchmarks/plot.py draws from it). Exit status 1 when valgrind or the program fails (a MISS is
reported, not an error).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(program, args, k):
    """Instructions of one run of `program args k` under callgrind."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               program, *args, str(k)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    match = COLLECTED.search(done.stderr)
    if not match:
        raise RuntimeError(f"no instruction count from {' '.join(command)}:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def per_dispatch(program, args, k):
    return (instructions(program, args, k) - instructions(program, args, 0)) / k


def measure_tree(build, k, jobs, only):
    program = os.path.join(build, "benchmarks", "bin", "dispatch_instructions")
    if not os.access(program, os.X_OK):
        raise RuntimeError(f"{program} is not built")
    listing = subprocess.run([program, "list"], capture_output=True, text=True, check=True).stdout
    cases = []
    for line in listing.splitlines():
        scenario, implementation, *counts = line.split()
        if only and scenario not in only:
            continue
        cases += [(scenario, implementation, int(n)) for n in counts]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {case: pool.submit(per_dispatch, program, [case[0], case[1], str(case[2])], k)
                   for case in cases}
        return {case: future.result() for case, future in futures.items()}


def info_of(build):
    try:
        with open(os.path.join(build, "benchmarks", "bench_info.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def compiler_of(build):
    info = info_of(build)
    if "compiler_id" in info and "compiler_version" in info:
        return f"{info['compiler_id']} {info['compiler_version']}"
    return os.path.basename(os.path.normpath(build))


def machine():
    """The CPU model, its logical CPUs and the OS, for the record (Linux; "" where unknown)."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = " ".join(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    system = ""
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    system = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    cpus = f"{os.cpu_count()} CPUs" if os.cpu_count() else ""
    return ", ".join(part for part in (model, cpus, system) if part)


def write_json(path, options, builds, results):
    """Every count of every tree: {"k", "machine", "trees": [{"build", "compiler_id",
    "compiler_version", "compiler", "rows": [{"scenario", "implementation", "n",
    "instructions"}]}]}."""
    trees = []
    for build, r in zip(builds, results):
        info = info_of(build)
        rows = [{"scenario": s, "implementation": i, "n": n, "instructions": round(v, 1)}
                for (s, i, n), v in sorted(r.items(), key=lambda item: (order_of(item[0][:2]),
                                                                        item[0][2]))]
        trees.append({"build": build, "compiler_id": info.get("compiler_id", ""),
                      "compiler_version": info.get("compiler_version", ""),
                      "compiler": compiler_of(build), "rows": rows})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"k": options.k, "machine": machine(), "trees": trees}, f, indent=1)
        f.write("\n")


def print_table(results, compilers):
    """One row per scenario/implementation, one column per (compiler, N)."""
    rows = sorted({(s, i) for r in results for (s, i, _) in r}, key=lambda row: order_of(row))
    counts = sorted({n for r in results for (_, _, n) in r})
    header = ["scenario", "implementation"] + [f"{c} N={n}" for c in compilers for n in counts]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * 2 + "--:|" * (len(header) - 2))
    for scenario, implementation in rows:
        cells = [scenario, implementation]
        for r in results:
            for n in counts:
                v = r.get((scenario, implementation, n))
                cells.append("" if v is None else f"{v:.0f}")
        print("| " + " | ".join(cells) + " |")


SCENARIO_ORDER = ["fold", "fallback", "chain", "aggregate", "verdict", "singleton", "coro", "observed",
                  "asio_await"]


def order_of(row):
    scenario, implementation = row
    rank = SCENARIO_ORDER.index(scenario) if scenario in SCENARIO_ORDER else len(SCENARIO_ORDER)
    return (rank, implementation != "hookset", implementation)


def targets(r):
    """(description, measured, bound, holds) for each instruction target that r can judge."""
    out = []

    def get(s, i, n):
        return r.get((s, i, n))

    # No hook: the dispatch against calling the default directly (for chain and aggregate
    # slots, the default and its companion, as the hand-written peer at N = 0 does).
    direct = get("fold", "direct", 0)
    for scenario, baseline in (("fold", direct), ("fallback", direct), ("singleton", direct),
                               ("chain", get("chain", "handwritten", 0)),
                               ("aggregate", get("aggregate", "stdfunction", 0))):
        h0 = get(scenario, "hookset", 0)
        if h0 is not None and baseline is not None:
            out.append((f"{scenario}, no hook: <= direct default call + 12", h0, baseline + 12,
                        h0 <= baseline + 12))
    for scenario, peer in (("fold", "stdfunction"), ("fallback", "stdfunction")):
        h1, p1 = get(scenario, "hookset", 1), get(scenario, peer, 1)
        if h1 is not None and p1 is not None:
            out.append((f"{scenario}, 1 hook: <= std::function loop + 15", h1, p1 + 15,
                        h1 <= p1 + 15))
    for scenario, peer in (("fold", "stdfunction"), ("chain", "handwritten")):
        h8, p8 = get(scenario, "hookset", 8), get(scenario, peer, 8)
        if h8 is not None and p8 is not None:
            out.append((f"{scenario}, 8 hooks: <= 1.10x the hand-written loop", h8, 1.10 * p8,
                        h8 <= 1.10 * p8))
    # Verdicts: a VerdictSlot (attributed contributions) against an Aggregate slot joining the
    # same verdicts from a std::vector<Verdict>.
    v8, va8 = get("verdict", "hookset", 8), get("verdict", "aggregate", 8)
    if v8 is not None and va8 is not None:
        out.append(("verdict slot, 8 hooks: <= the Aggregate slot of the same verdicts", v8, va8,
                    v8 <= va8))
    c8, hc8 = get("coro", "hookset", 8), get("coro", "handcoro", 8)
    if c8 is not None and hc8 is not None:
        out.append(("coroutine hooks, 8: <= 1.0x the hand-written coroutine loop", c8, hc8,
                    c8 <= hc8))
    for n in (0, 8):
        a, sp = get("asio_await", "hookset", n), get("asio_await", "sync_post", n)
        if a is not None and sp is not None:
            out.append((f"asio co_await, {n} hooks: <= dispatch + one post", a, sp, a <= sp))
        if a is not None and sp is not None:
            out.append((f"asio co_await, {n} hooks: <= 1.5x (dispatch + one post)", a, 1.5 * sp,
                        a <= 1.5 * sp))
    # Interceptors: one pass-through interceptor around the same fold dispatch.
    for n in (0, 8):
        plain = get("fold", "hookset", n)
        for kind, extra in (("sync", 60), ("coroutine", 400)):
            i = get("intercepted", kind, n)
            if i is not None and plain is not None:
                out.append((f"intercepted ({kind} interceptor), {n} hooks: <= dispatch + {extra}",
                            i, plain + extra, i <= plain + extra))
    # Keyed: an exact key among 1,000, against a hash map of std::function vectors and its loop.
    k8, hk8 = get("keyed", "hookset", 8), get("keyed", "handwritten", 8)
    if k8 is not None and hk8 is not None:
        out.append(("keyed exact, 8 hooks: <= hand-written map lookup + loop", k8, hk8, k8 <= hk8))
    e, none = get("observed", "hook_events", 8), get("observed", "none", 8)
    if e is not None and none is not None:
        out.append(("hook events, 8 hooks: <= 5x the unobserved dispatch", e, 5 * none,
                    e <= 5 * none))
    # Sampling's own cost: an observer that asks for hook events on 1 % of dispatches against
    # the same observer asking for none (both see every dispatch's begin and end).
    s1, d = get("observed", "hook_events_1pct", 8), get("observed", "dispatch_events", 8)
    if s1 is not None and d is not None:
        out.append(("hook events sampled 1 %, 8 hooks: <= 1.10x dispatch events only", s1,
                    1.10 * d, s1 <= 1.10 * d))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+", help="build trees with dispatch_instructions built")
    parser.add_argument("--k", type=int, default=2000, help="dispatches counted (default 2000)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", action="append", help="measure only this scenario (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="also write every count to this JSON file")
    options = parser.parse_args()
    if not shutil.which("valgrind"):
        print("instructions.py: valgrind is not installed (Debian package valgrind)",
              file=sys.stderr)
        return 1
    results, compilers = [], []
    try:
        for build in options.builds:
            results.append(measure_tree(build, options.k, options.jobs, options.only))
            compilers.append(compiler_of(build))
    except RuntimeError as error:
        print(f"instructions.py: {error}", file=sys.stderr)
        return 1
    print(f"Instructions per dispatch (callgrind, (I(K) - I(0)) / K, K = {options.k})\n")
    print_table(results, compilers)
    print("\nTargets (instructions)\n")
    print("| target | " + " | ".join(compilers) + " |")
    print("|---|" + "---|" * len(compilers))
    descriptions = []
    for r in results:
        for d, *_ in targets(r):
            if d not in descriptions:
                descriptions.append(d)
    for d in descriptions:
        cells = []
        for r in results:
            found = [t for t in targets(r) if t[0] == d]
            if not found:
                cells.append("not measured")
                continue
            _, measured, bound, holds = found[0]
            cells.append(f"{'PASS' if holds else 'MISS'} {measured:.0f} (bound {bound:.0f})")
        print(f"| {d} | " + " | ".join(cells) + " |")
    if options.json:
        write_json(options.json, options, options.builds, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
