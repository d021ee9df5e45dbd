#!/usr/bin/env python3
"""Runs hookset's dispatch benchmarks of one or more build trees and prints one markdown table.

    python3 benchmarks/report.py build/release-gcc build/release-clang
    python3 benchmarks/report.py --quick build/release-gcc            # short run (CI smoke)
    python3 benchmarks/report.py --compile-cost build/release-gcc ...  # + compile cost tables

Each build tree is one compiler (configured with -DHOOKSET_BUILD_BENCHMARKS=ON). Its benchmark
programs are listed in <build>/benchmarks/benchmarks.list (else found as
<build>/benchmarks/bin/bench_*); each is run with
    --benchmark_repetitions=10 --benchmark_report_aggregates_only=true --benchmark_format=json
and the medians are reported: per compiler, scenario and hook count N, hookset's time per
dispatch, each peer's time, hookset's ratio to each peer (hookset / peer: below 1 means hookset
is faster) and allocations per dispatch. The service scenarios (a dispatch awaited in Asio,
concurrent timer hooks, observers) follow in a second table, one row per implementation with its
ratio to hookset's row. A "targets" section follows, PASS/MISS with the numbers.

Benchmarks are named <scenario>/<implementation>/<N>[/iterations:K][/real_time][/threads:T]
(see benchmarks/support/common.hpp). Single-thread times are CPU time per dispatch (robust
against other load on the machine), except rows measured in real time (`/real_time` without
threads: wall clock per dispatch, e.g. hooks waiting on timers); multi-thread rows give
1 / total throughput (wall clock).

Exit status: non-zero if a benchmark program is missing or fails (or, with --strict, if a
target is missed). Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))

# Display order. Peers that a scenario does not have are shown as "–".
SCENARIOS = ["always_fold", "fallback_fold", "chain", "aggregate", "singleton", "coro", "mix",
             "always_fold_mt"]
SYNC_SCENARIOS = ["always_fold", "fallback_fold", "chain", "aggregate", "singleton"]
PEERS = ["inline", "fnptr", "stdfunction", "signals2", "sigcxx", "handcoro"]
PEER_TITLES = {
    "inline": "inline (floor)",
    "fnptr": "fn-ptr loop",
    "stdfunction": "std::function loop",
    "signals2": "Boost.Signals2",
    "sigcxx": "libsigc++ 3",
    "handcoro": "hand-written coro",
}
# The service scenarios: each implementation's row, in this order, against hookset's row.
SERVICE_SCENARIOS = {
    "asio_await": ["hookset", "async_call", "sync_post", "sync", "post"],
    "concurrent_timers": ["hookset", "sequential"],
    "observer": ["hookset", "set_dispatch", "set_hooks", "global_dispatch", "global_hooks", "clock_floor",
                 "stdfunction"],
    "tripwire_trip": ["hookset"],
    "tripwire_pass": ["hookset", "sequential"],
}
SERVICE_TITLES = {
    ("asio_await", "hookset"): "co_await set.call<S>(s)",
    ("asio_await", "async_call"): "co_await async_call(set.call<S>(s), use_awaitable)",
    ("asio_await", "sync_post"): "sync_wait(set.call<S>(s)) + co_await post",
    ("asio_await", "sync"): "sync_wait(set.call<S>(s)) alone",
    ("asio_await", "post"): "co_await post alone",
    ("concurrent_timers", "hookset"): "Concurrent slot (wall clock)",
    ("concurrent_timers", "sequential"): "same hooks, sequential (wall clock)",
    ("observer", "hookset"): "no observer",
    ("observer", "set_dispatch"): "per-set observer, dispatch events",
    ("observer", "set_hooks"): "per-set observer, + hook events",
    ("observer", "global_dispatch"): "process-wide observer, dispatch events",
    ("observer", "global_hooks"): "process-wide observer, + hook events",
    ("observer", "clock_floor"): "no observer, + 2 N steady_clock::now()",
    ("observer", "stdfunction"): "std::function loop (no hookset)",
    ("tripwire_trip", "hookset"): "a guard's deny to the work stopped (one-thread io_context)",
    ("tripwire_pass", "hookset"): "tripwire, N allowing guards around work done at once",
    ("tripwire_pass", "sequential"): "the same guards' dispatch, then the same work",
    ("plugin_reload", "loaded"): "reload of an 8-hook plugin, 2 threads dispatching (build loaded)",
    ("plugin_reload_cold", "loaded"): "the same, the new build mapped afresh",
    ("plugin_reload_cold", "idle"): "the same, no dispatch running",
}
NAME_RE = re.compile(r"^(?P<scenario>[a-z0-9_]+)/(?P<impl>[a-z0-9_]+)/(?P<n>\d+)"
                     r"(?:/iterations:\d+)?(?:/(?P<clock>real|manual)_time)?"
                     r"(?:/threads:(?P<threads>\d+))?$")


@dataclass
class Result:
    ns: float                # CPU ns per dispatch (single thread) or 1e9 / throughput
    cv: float                # coefficient of variation of that time over the repetitions
    allocs: float            # allocations per dispatch (median)
    items_per_second: float  # total throughput (all threads)


@dataclass
class Tree:
    path: str
    label: str
    results: dict = field(default_factory=dict)  # (scenario, impl, n, threads) -> Result
    failures: list = field(default_factory=list)


# ---- finding and running the programs --------------------------------------------------------------

def read_info(build_dir: str) -> dict:
    path = os.path.join(build_dir, "benchmarks", "bench_info.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def compiler_label(build_dir: str, info: dict) -> str:
    if info.get("compiler_id"):
        ident = {"GNU": "gcc", "Clang": "clang", "AppleClang": "apple-clang"}.get(
            info["compiler_id"], info["compiler_id"].lower())
        return f"{ident} {info.get('compiler_version', '')}".strip()
    # Fallback: CMake's record of the compiler.
    for path in glob.glob(os.path.join(build_dir, "CMakeFiles", "*", "CMakeCXXCompiler.cmake")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        ident = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
        version = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
        if ident:
            name = {"GNU": "gcc", "Clang": "clang"}.get(ident.group(1), ident.group(1).lower())
            return f"{name} {version.group(1) if version else ''}".strip()
    return os.path.basename(os.path.normpath(build_dir))


def find_programs(build_dir: str) -> list[str]:
    listing = os.path.join(build_dir, "benchmarks", "benchmarks.list")
    programs = []
    if os.path.exists(listing):
        with open(listing, encoding="utf-8") as f:
            programs = [line.strip() for line in f if line.strip()]
    if not programs:
        programs = sorted(glob.glob(os.path.join(build_dir, "benchmarks", "bin", "bench_*")))
    return [p for p in programs if os.path.basename(p).startswith("bench_")]


def min_time_arg(seconds: float, info: dict) -> str:
    # Google Benchmark up to 1.7.x takes a plain number of seconds; 1.8 wants a unit suffix.
    version = info.get("benchmark_version", "")
    parts = [int(x) for x in re.findall(r"\d+", version)[:2]] or [1, 7]
    newer = parts[0] > 1 or (parts[0] == 1 and len(parts) > 1 and parts[1] >= 8)
    return f"--benchmark_min_time={seconds:g}{'s' if newer else ''}"


def run_program(program: str, args: list[str], tree: Tree, timeout: float) -> None:
    name = os.path.basename(program)
    if not os.access(program, os.X_OK):
        tree.failures.append(f"{name}: not built ({program})")
        return
    t0 = time.monotonic()
    print(f"[report] {tree.label}: running {name} ...", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run([program, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        tree.failures.append(f"{name}: timed out after {timeout:.0f} s")
        return
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        tree.failures.append(f"{name}: exit status {proc.returncode}: {tail}")
        return
    if not proc.stdout.strip() and "--benchmark_filter" in " ".join(args):
        return  # the filter matched nothing in this program
    try:
        data = json.loads(proc.stdout)
    except ValueError as error:
        tree.failures.append(f"{name}: unreadable JSON output ({error})")
        return
    print(f"[report] {tree.label}: {name} done in {time.monotonic() - t0:.0f} s",
          file=sys.stderr, flush=True)
    collect(data, tree)


def number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def collect(data: dict, tree: Tree) -> None:
    by_run: dict[str, dict[str, dict]] = {}
    for entry in data.get("benchmarks", []):
        if entry.get("error_occurred"):
            tree.failures.append(f"{entry.get('name')}: {entry.get('error_message')}")
            continue
        run = entry.get("run_name", entry.get("name", ""))
        aggregate = entry.get("aggregate_name") or "single"
        by_run.setdefault(run, {})[aggregate] = entry
    for run, aggregates in by_run.items():
        match = NAME_RE.match(run)
        if not match:
            continue
        median = aggregates.get("median") or aggregates.get("single")
        if median is None:
            continue
        threads = int(match.group("threads") or median.get("threads", 1) or 1)
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}.get(median.get("time_unit", "ns"), 1.0)
        ips = number(median.get("items_per_second"))
        if threads > 1 or match.group("threads"):
            ns = 1e9 / ips if ips > 0 else math.nan
            cv_key = "real_time"
        elif match.group("clock"):
            ns = number(median.get("real_time")) * scale
            cv_key = "real_time"
        else:
            ns = number(median.get("cpu_time")) * scale
            cv_key = "cpu_time"
        cv = number(aggregates["cv"].get(cv_key)) if "cv" in aggregates else math.nan
        tree.results[(match.group("scenario"), match.group("impl"), int(match.group("n")),
                      threads)] = Result(ns, cv, number(median.get("allocs_per_dispatch")), ips)


# ---- formatting -------------------------------------------------------------------------------------

def fmt_ns(ns: float) -> str:
    if math.isnan(ns):
        return "?"
    if ns < 10:
        return f"{ns:.2f}"
    if ns < 100:
        return f"{ns:.1f}"
    return f"{ns:.0f}"


def fmt_time(ns: float) -> str:
    """A time with its unit: ns below 1 µs, µs below 1 ms, else ms."""
    if math.isnan(ns) or ns < 1e3:
        return f"{fmt_ns(ns)} ns"
    if ns < 1e6:
        return f"{fmt_ns(ns / 1e3)} µs"
    return f"{fmt_ns(ns / 1e6)} ms"


def fmt_allocs(allocs: float) -> str:
    if math.isnan(allocs):
        return "?"
    return f"{allocs:.0f}" if abs(allocs - round(allocs)) < 0.005 else f"{allocs:.2f}"


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and not math.isnan(a) and not math.isnan(b) else math.nan


def fmt_ratio(r: float) -> str:
    return "?" if math.isnan(r) else f"{r:.2f}x"


def table(trees: list[Tree]) -> str:
    head = ["compiler", "scenario", "N", "hookset ns", "hookset allocs"]
    head += [f"{PEER_TITLES[p]} ns (ratio)" for p in PEERS]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 3 + ["--:"] * (len(head) - 3)) + "|"]
    for tree in trees:
        keys = sorted({(s, n, t) for (s, _, n, t) in tree.results if s not in SERVICE_SCENARIOS},
                      key=lambda k: (SCENARIOS.index(k[0]) if k[0] in SCENARIOS else 99, k[0], k[1], k[2]))
        for scenario, n, threads in keys:
            mine = tree.results.get((scenario, "hookset", n, threads))
            label = scenario if threads == 1 and scenario != "always_fold_mt" else f"{scenario} ×{threads} thr"
            row = [tree.label, label, str(n)]
            if mine:
                cv = "" if math.isnan(mine.cv) else f" ±{mine.cv * 100:.0f}%"
                row += [fmt_ns(mine.ns) + cv, fmt_allocs(mine.allocs)]
            else:
                row += ["–", "–"]
            for peer in PEERS:
                other = tree.results.get((scenario, peer, n, threads))
                if not other:
                    row.append("–")
                    continue
                cell = fmt_ns(other.ns)
                if mine:
                    cell += f" ({fmt_ratio(ratio(mine.ns, other.ns))})"
                if not math.isnan(other.allocs) and other.allocs >= 0.005:
                    cell += f" [{fmt_allocs(other.allocs)} alloc]"
                row.append(cell)
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def service_table(trees: list[Tree]) -> str:
    """The service scenarios: one row per implementation, with hookset's ratio to it."""
    head = ["compiler", "scenario", "N", "implementation", "time", "hookset / this", "allocs"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|--:|---|--:|--:|--:|"]
    for tree in trees:
        for scenario, impls in SERVICE_SCENARIOS.items():
            for n in sorted({n for (s, _, n, _) in tree.results if s == scenario}):
                mine = tree.results.get((scenario, "hookset", n, 1))
                for impl in impls:
                    res = tree.results.get((scenario, impl, n, 1))
                    if not res:
                        continue
                    cv = "" if math.isnan(res.cv) else f" ±{res.cv * 100:.0f}%"
                    rel = "–" if impl == "hookset" or not mine else fmt_ratio(ratio(mine.ns, res.ns))
                    title = SERVICE_TITLES.get((scenario, impl), impl)
                    lines.append(f"| {tree.label} | {scenario} | {n} | `{impl}`: {title} | "
                                 f"{fmt_time(res.ns)}{cv} | {rel} | {fmt_allocs(res.allocs)} |")
    return "\n".join(lines) if len(lines) > 2 else ""


# ---- targets ----------------------------------------------------------------------------------------

def targets(tree: Tree) -> tuple[list[str], int]:
    r = tree.results
    out: list[str] = []
    misses = 0

    def get(scenario, impl, n, threads=1):
        return r.get((scenario, impl, n, threads))

    def verdict(ok) -> str:
        nonlocal misses
        if ok is None:
            return "n/a "
        if not ok:
            misses += 1
        return "PASS" if ok else "MISS"

    def ratio_target(scenario, n, peer, limit, what):
        a, b = get(scenario, "hookset", n), get(scenario, peer, n)
        if not a or not b:
            out.append(f"- n/a  {what}: not measured")
            return
        x = ratio(a.ns, b.ns)
        out.append(f"- {verdict(x <= limit)} {what}: {fmt_ns(a.ns)} / {fmt_ns(b.ns)} ns = "
                   f"{fmt_ratio(x)} (target ≤ {limit:.2f}x)")

    def faster_target(scenario, n, peer, factor, what):
        a, b = get(scenario, "hookset", n), get(scenario, peer, n)
        if not a or not b:
            out.append(f"- n/a  {what}: not measured")
            return
        x = ratio(b.ns, a.ns)
        out.append(f"- {verdict(x >= factor)} {what}: {fmt_ns(b.ns)} / {fmt_ns(a.ns)} ns = "
                   f"{x:.1f}x faster (target ≥ {factor:g}x)")

    ratio_target("always_fold", 8, "stdfunction", 1.10, "Always fold N=8 vs std::function loop")
    ratio_target("always_fold", 64, "stdfunction", 1.00, "Always fold N=64 vs std::function loop")
    ratio_target("always_fold", 64, "fnptr", 1.25, "Always fold N=64 vs fn-pointer loop")

    for scenario in ["always_fold", "fallback_fold", "chain", "singleton"]:
        a, b = get(scenario, "hookset", 0), get(scenario, "inline", 0)
        if a and b:
            d = a.ns - b.ns
            out.append(f"- {verdict(d <= 2.0)} {scenario} N=0 vs calling the default directly: "
                       f"{fmt_ns(a.ns)} - {fmt_ns(b.ns)} = +{d:.2f} ns (target ≤ +2 ns)")

    for scenario in SYNC_SCENARIOS:
        faster_target(scenario, 8, "signals2", 4, f"{scenario} N=8 vs Boost.Signals2")
    for scenario in SYNC_SCENARIOS:
        if get(scenario, "sigcxx", 8):
            faster_target(scenario, 8, "sigcxx", 2, f"{scenario} N=8 vs libsigc++")

    # Zero allocations for every synchronous dispatch. Aggregate hands its companion a
    # std::vector (the aggregate companion's interface), so one allocation is inherent there: it
    # is held to the inline peer's count (which reserves once).
    offenders, measured = [], 0
    for (scenario, impl, n, threads), res in sorted(r.items()):
        if scenario == "observer":
            if impl not in SERVICE_SCENARIOS["observer"] or impl in ("clock_floor", "stdfunction"):
                continue
        elif impl != "hookset" or scenario not in SYNC_SCENARIOS + ["always_fold_mt"]:
            continue
        measured += 1
        allowed = 0.0
        if scenario == "aggregate":
            floor = get(scenario, "inline", n)
            allowed = floor.allocs if floor else 1.0
        if math.isnan(res.allocs) or res.allocs > allowed + 0.005:
            offenders.append(f"{scenario} N={n}: {fmt_allocs(res.allocs)}"
                             + (f" (peer: {fmt_allocs(allowed)})" if allowed else ""))
    if measured:
        detail = "; ".join(offenders) if offenders else f"all {measured} sync benchmarks"
        out.append(f"- {verdict(not offenders)} sync dispatch allocations, observed ones included (0; "
                   f"aggregate: as many as the inline peer's one vector): {detail}")

    a = get("coro", "hookset", 8)
    if a:
        out.append(f"- {verdict(a.allocs < 0.005)} coroutine hooks N=8 allocations in steady state: "
                   f"{fmt_allocs(a.allocs)} per dispatch (target 0)")
    ratio_target("coro", 8, "handcoro", 0.70, "coroutine hooks N=8 vs hand-written coroutine loop")

    one, two = get("always_fold_mt", "hookset", 8, 1), get("always_fold_mt", "hookset", 8, 2)
    if one and two:
        scale = ratio(two.items_per_second, one.items_per_second)
        refs, best = [], 0.0
        for peer in ["stdfunction", "fnptr"]:
            p1, p2 = get("always_fold_mt", peer, 8, 1), get("always_fold_mt", peer, 8, 2)
            if p1 and p2:
                peer_scale = ratio(p2.items_per_second, p1.items_per_second)
                best = max(best, peer_scale)
                refs.append(f"{PEER_TITLES[peer]} {peer_scale:.2f}x")
        context = f"; the peers' loops on this machine now: {', '.join(refs)}" if refs else ""
        if refs and best < 1.7:
            context += ": the machine did not give two free cores, inconclusive"
        out.append(f"- {verdict(scale >= 1.7)} two threads on one unchanged set (Always fold N=8): "
                   f"{two.items_per_second / 1e6:.1f} vs {one.items_per_second / 1e6:.1f} M dispatch/s = "
                   f"{scale:.2f}x (target ≥ 1.7x{context})")

    # A dispatch awaited in an asio::awaitable: at most the synchronous dispatch plus one post.
    for n in [8, 0]:
        a, b = get("asio_await", "hookset", n), get("asio_await", "sync_post", n)
        if not a or not b:
            if n == 8:
                out.append("- n/a  asio_await N=8: not measured (Boost < 1.81, or filtered out)")
            continue
        x = ratio(a.ns, b.ns)
        out.append(f"- {verdict(x <= 1.0)} asio_await N={n}: co_await of the dispatch vs synchronous dispatch "
                   f"+ one post: {fmt_ns(a.ns)} / {fmt_ns(b.ns)} ns = {fmt_ratio(x)} (target ≤ 1.00x)")
        sync, post, via = get("asio_await", "sync", n), get("asio_await", "post", n), get("asio_await", "async_call", n)
        if sync and post:
            out.append(f"- info asio_await N={n}: the synchronous dispatch alone {fmt_ns(sync.ns)} ns, a bare post "
                       f"{fmt_ns(post.ns)} ns; awaiting the dispatch adds {a.ns - sync.ns:.0f} ns to the "
                       f"dispatch, {fmt_allocs(a.allocs)} allocations per dispatch"
                       + (f"; async_call + use_awaitable {fmt_ns(via.ns)} ns" if via else ""))

    # Concurrent hooks waiting on 10 ms timers: about one wait, not eight.
    conc, seq = get("concurrent_timers", "hookset", 8), get("concurrent_timers", "sequential", 8)
    if conc:
        out.append(f"- {verdict(conc.ns <= 12e6)} concurrent_timers N=8 (8 hooks x 10 ms timer), Concurrent slot: "
                   f"{fmt_time(conc.ns)} per dispatch, wall clock (target ≤ 12 ms)")
    if seq:
        out.append(f"- {verdict(seq.ns >= 80e6)} concurrent_timers N=8, the same hooks sequentially: "
                   f"{fmt_time(seq.ns)} per dispatch (target ≥ 80 ms: the waits really add up)")
    if conc and seq:
        out.append(f"- info concurrent_timers N=8: sequential / concurrent = {ratio(seq.ns, conc.ns):.1f}x")
    if not conc and not seq:
        out.append("- n/a  concurrent_timers: not measured (Boost < 1.81, or filtered out)")

    # Tripwires: a trip stops the work within 0.1 ms; passing guards cost at most 1 µs more than
    # the guards' dispatch and the work one after the other (which max(guards, work) is at most).
    trip = get("tripwire_trip", "hookset", 1)
    if trip:
        out.append(f"- {verdict(trip.ns <= 1e5)} tripwire_trip: a guard's deny to the work stopped, "
                   f"one-thread io_context: {fmt_time(trip.ns)} (target ≤ 0.1 ms)")
    guarded, sequential = get("tripwire_pass", "hookset", 4), get("tripwire_pass", "sequential", 4)
    if guarded and sequential:
        extra = guarded.ns - sequential.ns
        out.append(f"- {verdict(extra <= 1e3)} tripwire_pass N=4: tripwire {fmt_time(guarded.ns)} vs the "
                   f"guards then the work {fmt_time(sequential.ns)}: +{fmt_time(extra)} (target ≤ +1 µs)")
    if not trip and not guarded:
        out.append("- n/a  tripwire: not measured (Boost < 1.81, or filtered out)")

    # Observers: per-hook events at most double a fold's dispatch; none installed costs nothing.
    none = get("observer", "hookset", 8)
    if none:
        hooks = get("observer", "set_hooks", 8)
        if hooks:
            x = ratio(hooks.ns, none.ns)
            out.append(f"- {verdict(x <= 2.0)} observer N=8: per-set observer with hook events vs none: "
                       f"{fmt_ns(hooks.ns)} / {fmt_ns(none.ns)} ns = {fmt_ratio(x)} (target ≤ 2.00x)")
        for impl, what in [("set_dispatch", "per-set observer, dispatch events only"),
                           ("global_dispatch", "process-wide observer, no hook events"),
                           ("global_hooks", "process-wide observer with hook events"),
                           ("clock_floor", "no observer + the 16 clock readings hook events take")]:
            other = get("observer", impl, 8)
            if other:
                out.append(f"- info observer N=8: {what}: {fmt_ns(other.ns)} ns = "
                           f"{fmt_ratio(ratio(other.ns, none.ns))} of none")
        # With none installed, within noise of the always_fold dispatch (dispatch_fold). Two
        # programs run minutes apart on a shared machine: each hookset row is taken relative to
        # its own program's std::function loop, and the two ratios compared. "Within noise": 5 %,
        # or twice the four rows' summed spread over the repetitions, at most 15 %.
        rows = [none, get("observer", "stdfunction", 8), get("always_fold", "hookset", 8),
                get("always_fold", "stdfunction", 8)]
        if all(rows):
            here, there = ratio(rows[0].ns, rows[1].ns), ratio(rows[2].ns, rows[3].ns)
            spread = sum(row.cv for row in rows if not math.isnan(row.cv))
            bound = min(0.15, max(0.05, 2 * spread))
            x = ratio(here, there)
            noisy = "; the machine was noisier than that" if 2 * spread > 0.15 else ""
            out.append(f"- {verdict(abs(x - 1) <= bound)} observer N=8 with none installed vs always_fold "
                       f"(dispatch_fold), each over its program's std::function loop: {fmt_ns(rows[0].ns)} / "
                       f"{fmt_ns(rows[1].ns)} ns = {fmt_ratio(here)} vs {fmt_ns(rows[2].ns)} / "
                       f"{fmt_ns(rows[3].ns)} ns = {fmt_ratio(there)}: {fmt_ratio(x)} (target: within "
                       f"noise, ±{bound * 100:.0f}%; the rows' summed spread ±{spread * 100:.0f}%{noisy})")
    return out, misses


# ---- main -------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dirs", nargs="+", help="build trees, one per compiler")
    parser.add_argument("--quick", action="store_true",
                        help="short run: 3 repetitions, small minimum time (CI smoke test)")
    parser.add_argument("--repetitions", type=int, help="override the repetitions (default 10; 3 with --quick)")
    parser.add_argument("--min-time", type=float,
                        help="minimum seconds per repetition (default 0.05; 0.005 with --quick)")
    parser.add_argument("--filter", help="--benchmark_filter regex passed to every program")
    parser.add_argument("--json-out", help="also write every tree's medians to this JSON file")
    parser.add_argument("--compile-cost", action="store_true",
                        help="also measure compile cost (benchmarks/compile_cost/measure.py, then "
                             "peers.py at -O2, N = 8 and 64, one round)")
    parser.add_argument("--strict", action="store_true", help="exit non-zero when a target is missed")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per program (default 1200)")
    args = parser.parse_args()

    repetitions = args.repetitions or (3 if args.quick else 10)
    min_time = args.min_time if args.min_time is not None else (0.005 if args.quick else 0.05)

    trees: list[Tree] = []
    status = 0
    start = time.monotonic()
    for build_dir in args.build_dirs:
        info = read_info(build_dir)
        tree = Tree(build_dir, compiler_label(build_dir, info))
        trees.append(tree)
        programs = find_programs(build_dir)
        if not programs:
            tree.failures.append(f"no benchmark programs in {build_dir} "
                                 "(configure with -DHOOKSET_BUILD_BENCHMARKS=ON and build)")
        flags = [f"--benchmark_repetitions={repetitions}", "--benchmark_report_aggregates_only=true",
                 "--benchmark_format=json", min_time_arg(min_time, info)]
        if args.filter:
            flags.append(f"--benchmark_filter={args.filter}")
        for program in programs:
            run_program(program, flags, tree, args.timeout)

    print()
    print(f"## hookset dispatch benchmarks ({repetitions} repetitions, medians; "
          f"{min_time:g} s minimum per repetition)")
    print()
    print("Time per dispatch in ns (CPU time; `×2 thr` rows: 1 / total throughput of both threads). "
          "Peer cells: the peer's ns and (hookset / peer): below 1.00x hookset is faster. "
          "`±` is the coefficient of variation over the repetitions; `[k alloc]` a peer's allocations "
          "per dispatch.")
    print()
    print(table(trees))
    services = service_table(trees)
    if services:
        print()
        print("Service scenarios: time per dispatch (CPU time; `concurrent_timers`: wall clock) and "
              "hookset's ratio to each row (below 1.00x hookset is faster).")
        print()
        print(services)
    print()
    print("### targets")
    total_misses = 0
    for tree in trees:
        lines, misses = targets(tree)
        total_misses += misses
        print()
        print(f"**{tree.label}** ({tree.path})")
        print()
        print("\n".join(lines) if lines else "- nothing measured")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print()
    print(f"Run took {time.monotonic() - start:.0f} s"
          + (f"; load average now {load[0]:.1f} on {os.cpu_count()} CPUs" if load else "")
          + ". Noisy machines inflate the ± and the thread-scaling row most.")

    if args.json_out:
        dump = {t.label: {f"{s}/{i}/{n}/threads:{th}": vars(res) for (s, i, n, th), res in t.results.items()}
                for t in trees}
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(dump, f, indent=1)

    failures = [(t.label, f) for t in trees for f in t.failures]
    if failures:
        print()
        print("### failures")
        for label, failure in failures:
            print(f"- {label}: {failure}")
        status = 1

    if args.compile_cost:
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        sys.path.insert(0, os.path.join(HERE, "compile_cost"))
        import measure  # noqa: E402  (benchmarks/compile_cost/measure.py)
        print()
        if measure.main(["--quick"] if args.quick else []) != 0:
            status = 1
        # Against the peers: the events programs at -O2, one round (the full grid, both levels
        # and N = 1, in interleaved rounds, is benchmarks/compile_cost/peers.py by hand).
        import peers  # noqa: E402  (benchmarks/compile_cost/peers.py)
        print()
        if peers.main(["--sizes", *(["8"] if args.quick else ["8", "64"]), "--opts", "O2",
                       "--rounds", "1"]) != 0:
            status = 1

    if args.strict and total_misses:
        status = status or 2
    return status


if __name__ == "__main__":
    sys.exit(main())
