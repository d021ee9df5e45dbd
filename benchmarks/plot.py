#!/usr/bin/env python3
"""Draws docs/dispatch_overhead.svg: instructions and time per dispatch of the Always fold slot
against the number of hooks (0, 1, 8, 64), hookset beside the hand-written std::function loop,
Boost.Signals2 and libsigc++ 3, for every compiler measured.

    python3 benchmarks/plot.py --instructions INSTRUCTIONS.json --times TIMES.json [-o SVG]

INSTRUCTIONS.json is written by `benchmarks/instructions.py --json FILE` (the `fold` rows),
TIMES.json by `benchmarks/report.py --json-out FILE` (the `always_fold` rows); the main job
(scripts/main.sh) writes both and runs this script. The output is deterministic (no date, fixed
SVG ids): the same data gives the same file. Needs matplotlib (Debian: python3-matplotlib); exits
77 without it, 1 when the data is missing or unreadable.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, os.pardir, "docs", "dispatch_overhead.svg")

HOOK_COUNTS = [0, 1, 8, 64]
# (implementation as both scripts name it, legend, colour)
IMPLEMENTATIONS = [
    ("hookset", "hookset", "#1f77b4"),
    ("stdfunction", "std::function loop", "#2ca02c"),
    ("signals2", "Boost.Signals2", "#d62728"),
    ("sigcxx", "libsigc++ 3", "#9467bd"),
]
# Line style by compiler family; a third family gets dotted lines.
STYLES = {"gcc": "-", "clang": "--"}
FAMILY_NAMES = {"gcc": "GCC", "clang": "Clang"}


def family_and_version(label):
    """("gcc", "12.2.0") from report.py's "gcc 12.2.0" or instructions.py's "GNU 12.2.0"."""
    name, _, version = label.strip().partition(" ")
    name = name.lower()
    return {"gnu": "gcc", "appleclang": "clang", "apple-clang": "clang"}.get(name, name), version


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise SystemExit(f"plot.py: cannot read {path}: {error}") from error


def instruction_series(data):
    """{(family, version): {implementation: {n: instructions}}} from the `fold` rows."""
    out = {}
    for tree in data.get("trees", []):
        label = (f"{tree['compiler_id']} {tree.get('compiler_version', '')}"
                 if tree.get("compiler_id") else tree.get("compiler", ""))
        compiler = family_and_version(label)
        for row in tree.get("rows", []):
            if row.get("scenario") == "fold":
                out.setdefault(compiler, {}).setdefault(row["implementation"], {})[
                    int(row["n"])] = float(row["instructions"])
    return out


def time_series(data):
    """{(family, version): {implementation: {n: ns}}} from the single-thread `always_fold` rows."""
    out = {}
    for label, rows in data.items():
        compiler = family_and_version(label)
        for key, result in rows.items():
            parts = key.split("/")
            if len(parts) == 4 and parts[0] == "always_fold" and parts[3] == "threads:1":
                out.setdefault(compiler, {}).setdefault(parts[1], {})[int(parts[2])] = float(
                    result["ns"])
    return out


def compiler_order(compiler):
    family, version = compiler
    rank = list(STYLES).index(family) if family in STYLES else len(STYLES)
    return (rank, family, version)


def draw(axes, series, ylabel, title, formatter):
    positions = range(len(HOOK_COUNTS))
    for compiler in sorted(series, key=compiler_order):
        style = STYLES.get(compiler[0], ":")
        for implementation, _, colour in IMPLEMENTATIONS:
            values = series[compiler].get(implementation, {})
            points = [(x, values[n]) for x, n in zip(positions, HOOK_COUNTS) if n in values]
            if points:
                axes.plot([x for x, _ in points], [y for _, y in points], linestyle=style,
                          color=colour, marker="o", markersize=4, linewidth=1.6)
    axes.set_xticks(list(positions), [str(n) for n in HOOK_COUNTS])
    axes.set_xlabel("hooks registered (N)")
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(formatter)  # 10, 100, 1000: not 10^1, 10^2, 10^3
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=11)
    axes.grid(True, which="major", color="#dddddd", linewidth=0.8)
    axes.grid(True, which="minor", axis="y", color="#f0f0f0", linewidth=0.5)
    axes.set_axisbelow(True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instructions", required=True, metavar="JSON",
                        help="benchmarks/instructions.py --json output")
    parser.add_argument("--times", required=True, metavar="JSON",
                        help="benchmarks/report.py --json-out output")
    parser.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                        help="SVG to write (default: docs/dispatch_overhead.svg)")
    options = parser.parse_args(argv)

    try:
        import matplotlib
    except ImportError:
        print("plot.py: matplotlib is not installed (Debian package python3-matplotlib)",
              file=sys.stderr)
        return 77
    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    instruction_data = load(options.instructions)
    instructions = instruction_series(instruction_data)
    times = time_series(load(options.times))
    problems = []
    if not instructions:
        problems.append(f"no `fold` rows in {options.instructions}")
    if not times:
        problems.append(f"no `always_fold` rows in {options.times}")
    if problems:
        print("plot.py: " + "; ".join(problems), file=sys.stderr)
        return 1

    matplotlib.rcParams.update({
        "svg.hashsalt": "hookset-dispatch-overhead",  # fixed ids: the same data, the same file
        "svg.fonttype": "none",                       # text as text: small, diffable
        "font.family": "sans-serif",
        "font.size": 9,
    })
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(10, 4.6))
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    draw(left, instructions, "instructions per dispatch (log scale)",
         f"Instructions (callgrind, K = {instruction_data.get('k', '?')})", plain)
    draw(right, times, "ns per dispatch (log scale)", "Time (CPU time, median)", plain)

    compilers = sorted(set(instructions) | set(times), key=compiler_order)
    present = {i for series in (instructions, times) for c in series for i in series[c]}
    handles = [Line2D([], [], color=colour, marker="o", markersize=4, linewidth=1.6, label=label)
               for implementation, label, colour in IMPLEMENTATIONS if implementation in present]
    handles += [Line2D([], [], color="#444444", linestyle=STYLES.get(family, ":"), linewidth=1.6,
                       label=f"{FAMILY_NAMES.get(family, family)} {version}")
                for family, version in compilers]
    figure.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False,
                  bbox_to_anchor=(0.5, 0.0))
    machine = instruction_data.get("machine") or "machine not recorded"
    figure.suptitle("hookset: one dispatch of an Always fold slot, int(std::string_view), "
                    "against the number of hooks", fontsize=12)
    figure.text(0.5, 0.905, f"-O2 -DNDEBUG; {machine}", ha="center", fontsize=9, color="#444444")
    figure.tight_layout(rect=(0, 0.06, 1, 0.92))
    os.makedirs(os.path.dirname(os.path.abspath(options.output)), exist_ok=True)
    figure.savefig(options.output, format="svg", metadata={"Date": None})
    print(f"plot.py: wrote {os.path.normpath(options.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
