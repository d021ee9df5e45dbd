#!/usr/bin/env python3
"""What the events program costs the compiler, written with hookset and with its peers (issue 39):
N events in four signature shapes, one handler each, each fired once (generate.py's `events`
modes: hookset, std::function loops, Boost.Signals2, libsigc++ 3). Compiles every program with
every compiler at every optimisation level, in interleaved rounds - within a round the four
versions of one (flags, N, compiler) are compiled one after the other, so a slow spell of the
shared machine touches all four alike - and prints CPU seconds (user + system of the compiler
process) as markdown tables: the median of the rounds with the min and max, the ratios hookset /
Signals2 and hookset / libsigc++ (the median of the per-round ratios), the `.text` bytes of each
object, the machine's load while it ran, and the targets of issue 39.

    python3 benchmarks/compile_cost/peers.py                    # the full grid, 3 rounds: ~20 min
    python3 benchmarks/compile_cost/peers.py --sizes 8 64 --opts O2 --rounds 1   # the main job's
    python3 benchmarks/compile_cost/peers.py --sizes 1 --opts O0 --rounds 1 --run  # smoke test
    python3 benchmarks/compile_cost/peers.py --json build/peers.json   # also every sample

`events_separate` is the hookset program again, compiled with HOOKSET_SEPARATE_COMPILATION: the
code that does not depend on a slot's types is then compiled once per program, in the one file
that includes <hookset/impl/src.hpp> (not counted, as libsigc++'s library is not: both are
compiled once for a whole program); `--run` compiles that file too, to link.

Flags: `-std=c++20 -I include` plus the level (and `pkg-config --cflags sigc++-3.0` for the
libsigc++ program), compile only (-c); `--run` also links every object of the first round and
runs it (each program checks its own results). A peer that is not installed (no
`<boost/signals2/signal.hpp>`, no pkg-config `sigc++-3.0`) is left out and said so.
Python 3 standard library only (and binutils' `size`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import generate  # noqa: E402

LABELS = {"events_stdfunction": "std::function loop", "events_sigcxx": "libsigc++ 3",
          "events_signals2": "Boost.Signals2", "events": "hookset",
          "events_separate": "hookset, separate compilation"}
# Table columns, cheapest first as in issue 39, then hookset's separate-compilation mode.
COLUMNS = ["events_stdfunction", "events_sigcxx", "events_signals2", "events", "events_separate"]
MODES = generate.EVENT_MODES + ["events_separate"]
SEPARATE = "-DHOOKSET_SEPARATE_COMPILATION"


@dataclass
class Cell:
    """Every round's compile of one program with one compiler and one level."""
    opt: str
    slots: int
    compiler: str
    mode: str
    cpu_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    peak_mib: list[float] = field(default_factory=list)
    text_bytes: int = 0
    error: str = ""


# ---- measuring ----------------------------------------------------------------------------------

def timed(command: list[str]) -> tuple[int, float, float, float, str]:
    """Runs command; its exit status, CPU seconds (user + system of the process and the children
    it waited for: the driver, cc1plus, as), wall seconds, peak MiB and standard error."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        err.seek(0)
        errors = err.read().decode(errors="replace")
    return proc.returncode, usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, errors


def text_bytes(obj: str) -> int:
    """The code of an object file: its `.text` sections summed (GCC and Clang put each inline
    function in a `.text.<name>` section of its own, to be folded at link time)."""
    out = subprocess.run(["size", "-A", obj], capture_output=True, text=True, check=True).stdout
    return sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", out, re.M))


def compiler_label(cxx: str) -> str:
    first = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()
    first = first[0] if first else cxx
    version = re.search(r"(\d+\.\d+\.\d+)", first)
    kind = "clang" if "clang" in first.lower() else "gcc"
    return f"{kind} {version.group(1)}" if version else first


def sigcxx_flags(which: str) -> list[str] | None:
    if not shutil.which("pkg-config"):
        return None
    proc = subprocess.run(["pkg-config", which, "sigc++-3.0"], capture_output=True, text=True)
    return proc.stdout.split() if proc.returncode == 0 else None


def has_signals2(cxx: str) -> bool:
    proc = subprocess.run([cxx, "-std=c++20", "-E", "-x", "c++", "-", "-o", os.devnull],
                          input="#include <boost/signals2/signal.hpp>\n", capture_output=True, text=True)
    return proc.returncode == 0


class Load:
    """The machine's load while the rounds ran: the 1-minute load average at every compile, and
    the share of all CPUs that were busy (/proc/stat), our compiles included."""

    def __init__(self) -> None:
        self.averages: list[float] = []
        self.start = self._stat()

    @staticmethod
    def _stat() -> tuple[int, int] | None:
        try:
            with open("/proc/stat", encoding="ascii") as f:
                ticks = [int(x) for x in f.readline().split()[1:]]
        except OSError:
            return None
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        return sum(ticks), idle

    def sample(self) -> None:
        if hasattr(os, "getloadavg"):
            self.averages.append(os.getloadavg()[0])

    def summary(self, own_cpu_s: float, wall_s: float) -> str:
        cpus = os.cpu_count() or 1
        parts = []
        if self.averages:
            parts.append(f"1-minute load average {statistics.median(self.averages):.1f} (median; "
                         f"{min(self.averages):.1f}–{max(self.averages):.1f}) on {cpus} CPUs")
        end = self._stat()
        if self.start and end and end[0] > self.start[0]:
            busy = 1 - (end[1] - self.start[1]) / (end[0] - self.start[0])
            ours = own_cpu_s / (wall_s * cpus) if wall_s > 0 else 0
            parts.append(f"the CPUs {busy * 100:.0f} % busy, these compiles "
                         f"{ours * 100:.0f} % of the CPU time there was")
        return "; ".join(parts) or "load not known"


# ---- tables -------------------------------------------------------------------------------------

def spread(values: list[float], unit: str = "") -> str:
    """The median, and the range when there are several rounds: `1.23x (1.10–1.40)`."""
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}{unit}"
    return f"{statistics.median(values):.2f}{unit} ({min(values):.2f}–{max(values):.2f})"


def ratios(mine: Cell, theirs: Cell | None) -> list[float]:
    """Round by round: the rounds' compiles of the two programs ran side by side."""
    if theirs is None or mine.error or theirs.error:
        return []
    return [a / b for a, b in zip(mine.cpu_s, theirs.cpu_s) if b > 0]


def ratio_text(values: list[float]) -> str:
    return spread(values, "x")


def print_tables(cells: dict, opts: list[str], sizes: list[int], labels: dict[str, str],
                 modes: list[str], rounds: int) -> None:
    compilers = list(labels)
    columns = [m for m in COLUMNS if m in modes]
    peers = [p for p in ("events_signals2", "events_sigcxx") if p in modes and "events" in modes]
    ratio_heads = "".join(f" hookset / {LABELS[p].split()[0].replace('Boost.', '')} |" for p in peers)
    short = " / ".join(labels[c].split(".")[0].replace("gcc", "GCC").replace("clang", "Clang")
                       for c in compilers)
    for opt in opts:
        print(f"| {opt}, {short} | " + " | ".join(LABELS[m] for m in columns) + " |" + ratio_heads)
        print("|---|" + "--:|" * (len(columns) + len(peers)))
        for n in sizes:
            row = [" / ".join(f"{statistics.median(cells[opt, n, c, m].cpu_s):.2f}"
                              if cells[opt, n, c, m].cpu_s else "–" for c in compilers) for m in columns]
            for peer in peers:
                row.append(" / ".join(
                    f"{statistics.median(r):.2f}x" if (r := ratios(cells[opt, n, c, "events"],
                                                                   cells[opt, n, c, peer])) else "–"
                    for c in compilers))
            print(f"| N = {n} | " + " | ".join(row) + " |")
        print()
    print(f"Every cell: CPU seconds, the median of {rounds} rounds (min–max); ratios: the median of "
          f"the rounds' ratios (min–max)." if rounds > 1 else "Every cell: CPU seconds, one round.")
    print()
    print("| flags | N | compiler | " + " | ".join(LABELS[m] for m in columns) + " |" + ratio_heads)
    print("|---|--:|---|" + "--:|" * (len(columns) + len(peers)))
    for opt in opts:
        for n in sizes:
            for c in compilers:
                row = [spread(cells[opt, n, c, m].cpu_s) if not cells[opt, n, c, m].error
                       else "FAILED" for m in columns]
                row += [ratio_text(ratios(cells[opt, n, c, "events"], cells[opt, n, c, peer])) for peer in peers]
                print(f"| {opt} | {n} | {labels[c]} | " + " | ".join(row) + " |")
    print()
    if "-O2" in opts:
        print("`.text` of each object at -O2, KB (all `.text*` sections, 1 KB = 1024 bytes):")
        print()
        print("| N | compiler | " + " | ".join(LABELS[m] for m in columns) + " |")
        print("|--:|---|" + "--:|" * len(columns))
        for n in sizes:
            for c in compilers:
                print(f"| {n} | {labels[c]} | " +
                      " | ".join(f"{cells['-O2', n, c, m].text_bytes / 1024:.1f}" for m in columns) + " |")
        print()


def print_targets(cells: dict, labels: dict[str, str]) -> None:
    """Issue 39's compile-time targets, PASS or MISS (information: they judge the engine work)."""
    checks = [("-O2", 8, "events_signals2", 0.6), ("-O2", 64, "events_sigcxx", 1.0),
              ("-O0", 8, "events_signals2", 0.6)]
    lines = []
    for opt, n, peer, bound in checks:
        for c in labels:
            r = ratios(cells.get((opt, n, c, "events"), Cell(opt, n, c, "events")), cells.get((opt, n, c, peer)))
            if not r:
                continue
            x = statistics.median(r)
            separate = ratios(cells.get((opt, n, c, "events_separate"), Cell(opt, n, c, "")),
                              cells.get((opt, n, c, peer)))
            lines.append(f"- {'PASS' if x <= bound else 'MISS'} {labels[c]} {opt}, {n} events: hookset "
                         f"{x:.2f}x {LABELS[peer]} (target ≤ {bound:g}x)" +
                         (f"; with separate compilation {statistics.median(separate):.2f}x"
                          if separate else ""))
    if lines:
        print("### compile-cost targets against the peers (issue 39)")
        print()
        print("\n".join(lines))
        print()


# ---- main ---------------------------------------------------------------------------------------

def separate_part(cxx: str, flags: list[str], work: str) -> str:
    """The object of the program's one file with <hookset/impl/src.hpp>, for `--run` only."""
    source = os.path.join(work, "hookset_src.cpp")
    with open(source, "w", encoding="utf-8") as f:
        f.write("#include <hookset/impl/src.hpp>\n")
    obj = os.path.join(work, f"hookset_src_{os.path.basename(cxx)}{flags[0]}.o")
    subprocess.run([cxx, *flags, "-c", source, "-o", obj], check=True)
    return obj


def pick(*names: str) -> str | None:
    return next((n for n in names if shutil.which(n)), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compilers", nargs="+", default=None,
                        help="default: g++-12 (or g++) and clang++-14 (or clang++)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[1, 8, 64], help="events (default 1 8 64)")
    parser.add_argument("--opts", nargs="+", default=["O0", "O2"],
                        help="optimisation levels without the dash (default O0 O2)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES,
                        help="programs (default: all five)")
    parser.add_argument("--include", default=os.path.join(ROOT, "include"), help="hookset's include directory")
    parser.add_argument("--extra-flags", default="", help="more compiler flags, space-separated")
    parser.add_argument("--run", action="store_true", help="link and run the first round's objects")
    parser.add_argument("--json", help="write every sample to this file (after every round)")
    parser.add_argument("--from-json", help="print the tables of a run saved with --json, measure nothing")
    parser.add_argument("--keep", help="keep the sources and objects in this directory")
    args = parser.parse_args(argv)

    if args.from_json:
        return report_saved(args.from_json)
    args.opts = ["-" + opt.lstrip("-") for opt in args.opts]
    compilers = args.compilers or [c for c in (pick("g++-12", "g++"), pick("clang++-14", "clang++")) if c]
    labels = {c: compiler_label(c) for c in compilers}
    sig_cflags, sig_libs = sigcxx_flags("--cflags"), sigcxx_flags("--libs")
    modes = list(args.modes)
    notes = []
    if "events_sigcxx" in modes and sig_cflags is None:
        modes.remove("events_sigcxx")
        notes.append("libsigc++ 3 not found (pkg-config sigc++-3.0): its programs are left out")
    if "events_signals2" in modes and not all(has_signals2(c) for c in compilers):
        modes.remove("events_signals2")
        notes.append("<boost/signals2/signal.hpp> not found: the Signals2 programs are left out")
    for note in notes:
        print(f"[compile-cost peers] {note}", file=sys.stderr)

    work = args.keep or tempfile.mkdtemp(prefix="hookset-compile-peers-")
    os.makedirs(work, exist_ok=True)
    cells: dict[tuple[str, int, str, str], Cell] = {}
    load = Load()
    start = time.monotonic()
    status = 0
    try:
        sources = {}
        for mode in modes:
            for n in args.sizes:
                sources[mode, n] = os.path.join(work, f"{mode}_{n}.cpp")
                with open(sources[mode, n], "w", encoding="utf-8") as f:
                    f.write(generate.generate(n, "events" if mode == "events_separate" else mode))
        for r in range(max(1, args.rounds)):
            for opt in args.opts:
                for n in args.sizes:
                    for c in compilers:
                        for mode in modes:
                            cell = cells.setdefault((opt, n, c, mode), Cell(opt, n, labels[c], mode))
                            if cell.error:
                                continue
                            print(f"[compile-cost peers] round {r + 1}: {labels[c]} {opt} {mode} {n}",
                                  file=sys.stderr, flush=True)
                            obj = os.path.join(work, f"{mode}_{n}_{os.path.basename(c)}{opt}.o")
                            flags = [opt, "-std=c++20", "-I", args.include, *args.extra_flags.split()]
                            if mode == "events_sigcxx":
                                flags += sig_cflags
                            if mode == "events_separate":
                                flags.append(SEPARATE)
                            load.sample()
                            code, cpu, wall, peak, errors = timed([c, *flags, "-c", sources[mode, n], "-o", obj])
                            if code != 0:
                                wrong = [line for line in errors.splitlines() if "error" in line][:2]
                                cell.error = " / ".join(wrong) or f"exit status {code}"
                                status = 1
                                continue
                            cell.cpu_s.append(cpu)
                            cell.wall_s.append(wall)
                            cell.peak_mib.append(peak)
                            cell.text_bytes = text_bytes(obj)
                            if args.run and r == 0:
                                exe = obj[:-2] + ".exe"
                                libs = sig_libs if mode == "events_sigcxx" else []
                                if mode == "events_separate":
                                    libs = [separate_part(c, flags, work)]
                                linked = subprocess.run([c, obj, "-o", exe, *libs], capture_output=True)
                                if linked.returncode != 0 or subprocess.run([exe]).returncode != 0:
                                    cell.error = "link failed" if linked.returncode else "WRONG RESULTS"
                                    status = 1
            if args.json:
                save(args.json, cells, labels, load, time.monotonic() - start, r + 1, args, modes, notes)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - start
    report(cells, labels, load.summary(sum(sum(c.cpu_s) for c in cells.values()), elapsed), elapsed,
           args.opts, args.sizes, modes, max(1, args.rounds), args.run, notes)
    return status


def save(path: str, cells: dict, labels: dict[str, str], load: Load, elapsed: float, rounds: int,
         args, modes: list[str], notes: list[str]) -> None:
    own = sum(sum(c.cpu_s) for c in cells.values())
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"compilers": labels, "rounds": rounds, "seconds": elapsed, "opts": args.opts,
                   "sizes": args.sizes, "modes": modes, "run": args.run, "notes": notes,
                   "load": load.summary(own, elapsed), "load_averages": load.averages,
                   "cells": [dict(asdict(c), command=k[2]) for k, c in cells.items()]}, f, indent=1)


def report_saved(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        saved = json.load(f)
    cells = {}
    for raw in saved["cells"]:
        command = raw.pop("command")
        cells[raw["opt"], raw["slots"], command, raw["mode"]] = Cell(**raw)
    report(cells, saved["compilers"], saved["load"], saved["seconds"], saved["opts"], saved["sizes"],
           saved["modes"], saved["rounds"], saved["run"], saved["notes"])
    return 1 if any(c.error for c in cells.values()) else 0


def report(cells: dict, labels: dict[str, str], load: str, elapsed: float, opts: list[str],
           sizes: list[int], modes: list[str], rounds: int, ran: bool, notes: list[str]) -> None:
    print(f"## compile cost against the peers: N events in four signature shapes, one handler "
          f"each, each fired once (`-std=c++20`, compile only)")
    print()
    print("Shapes, in turn: `void(int)`, an `int(int)` fold, `void(const std::string&)`, a "
          "`bool(std::string_view, int)` veto (benchmarks/compile_cost/generate.py, `events` modes). "
          "CPU seconds of the compiler, interleaved rounds; ratios below 1 mean hookset compiles faster.")
    print()
    print_tables(cells, opts, sizes, labels, modes, rounds)
    print_targets(cells, labels)
    failures = [c for c in cells.values() if c.error]
    for cell in failures:
        print(f"- FAILED {cell.compiler} {cell.opt} {cell.mode} {cell.slots}: {cell.error}")
    if ran and not failures:
        print("Every program was linked and run once, and checked its results.")
    for note in notes:
        print(f"- {note}")
    print(f"Took {elapsed:.0f} s; {load}.")


if __name__ == "__main__":
    sys.exit(main())
