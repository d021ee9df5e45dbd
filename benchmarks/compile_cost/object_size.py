#!/usr/bin/env python3
"""How much code hookset puts in a file that dispatches (issue 39): compiles small programs with
GCC -O2 and reads the `.text` bytes of each object (all `.text*` sections: an inline function
gets a section of its own), then separates the code every dispatching file carries from the code
each slot kind adds, and lists the functions that weigh most.

    python3 benchmarks/compile_cost/object_size.py                  # g++-12 (or g++), ~3 min
    python3 benchmarks/compile_cost/object_size.py --compilers g++-12 clang++-14
    python3 benchmarks/compile_cost/object_size.py --include ../before/include include

The programs (each registers one synchronous hook per slot, dispatches each slot once with
sync_wait and checks the results; --run links and runs them):
  empty          int main() alone, nothing included
  included       the same with <hookset/hookset.hpp> included: what including costs the object
  std::function  the plain slot written by hand: a std::vector<std::function<int(int, int)>>, folded
  plain          one plain slot: Slot<int(int), Always>, a fold
  plain + K      the plain slot and one slot of kind K (the table's rows)
  ..., separate  the same compiled with HOOKSET_SEPARATE_COMPILATION (plain and plain +
                 fold-signature), and impl/src.hpp: the code such a program compiles once

How the code is separated. A second slot of the plain kind (same signature and options) adds
nearly nothing: the engine is instantiated per signature and options, not per slot. A fold of
another signature (`long(long)`) instantiates the whole per-kind engine again and nothing else, so
what it adds is what one fold kind costs; the plain file minus `empty` minus that is the code
that does not depend on the slot kind (the set, the hook lists, sync_wait, the shared parts of the
engine). Every other kind K costs (plain + K) - plain: its own engine instances, plus whatever it
needs that a fold does not (a companion's loop, the aggregate's vector, the driver of a coroutine
hook). With separate compilation the same subtraction gives what is left of the slot-independent
code in a dispatching file (src.hpp, compiled once per program, holds the rest). Python 3
standard library only (and binutils' `size` and `readelf`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
from peers import compiler_label, text_bytes  # noqa: E402

# The plain slot, and one slot of each further kind: (what, declarations, hook, check).
# `declarations` may name helper types first; the slot is always K.
PLAIN = ("fold `int(int)`, Always",
         "struct P : hookset::Slot<int(int), hookset::Always> {\n"
         "  static int default_impl(int x) { return x; }\n};",
         "set.add<P>([](int x, std::optional<int> last) { return *last + x; })",
         "hookset::sync_wait(set.call<P>(3)) == 6")

# The aggregate's companion, shared by the Aggregate and Concurrent kinds.
SUM = ("struct Sum {\n"
       "  int operator()(std::vector<int> outputs) const {\n"
       "    int total = 0;\n"
       "    for (int output : outputs) total += output;\n"
       "    return total;\n"
       "  }\n};\n")

KINDS = {
    "second-slot": (
        "a second `int(int)` Always fold",
        "struct K : hookset::Slot<int(int), hookset::Always> {\n"
        "  static int default_impl(int x) { return x + 1; }\n};",
        "set.add<K>([](int x, std::optional<int> last) { return *last + x + 1; })",
        "hookset::sync_wait(set.call<K>(3)) == 8"),
    "fold-signature": (
        "fold `long(long)`, Always: the per-kind code of a fold",
        "struct K : hookset::Slot<long(long), hookset::Always> {\n"
        "  static long default_impl(long x) { return x; }\n};",
        "set.add<K>([](long x, std::optional<long> last) { return *last + x; })",
        "hookset::sync_wait(set.call<K>(3L)) == 6L"),
    "fallback": (
        "`int(int)`, Fallback",
        "struct K : hookset::Slot<int(int), hookset::Fallback> {\n"
        "  static int default_impl(int x) { return x; }\n};",
        "set.add<K>([](int x, std::optional<int> last) { return last.value_or(0) + x; })",
        "hookset::sync_wait(set.call<K>(3)) == 3"),
    "void": (
        "`void(int)`, Always",
        "int seen = 0;\n"
        "struct K : hookset::Slot<void(int), hookset::Always> {\n"
        "  static void default_impl(int) {}\n};",
        "set.add<K>([](int x) { seen += x; })",
        "(hookset::sync_wait(set.call<K>(3)), seen == 3)"),
    "singleton": (
        "`int(int)`, Singleton",
        "struct K : hookset::Slot<int(int), hookset::Singleton> {\n"
        "  static int default_impl(int x) { return x; }\n};",
        "set.add<K>([](int x) { return x + 1; })",
        "hookset::sync_wait(set.call<K>(3)) == 4"),
    "chain": (
        "`std::optional<int>(int)`, Always + Chain<ShortCircuit>",
        "struct K : hookset::Slot<std::optional<int>(int), hookset::Always,\n"
        "                         hookset::Chain<hookset::ShortCircuit>> {\n"
        "  static std::optional<int> default_impl(int x) { return x; }\n};",
        "set.add<K>([](int x) -> std::optional<int> { return x + 1; })",
        "hookset::sync_wait(set.call<K>(3)) == 4"),
    "aggregate": (
        "`int(int)`, Always + Aggregate<Sum>",
        SUM +
        "struct K : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>> {\n"
        "  static int default_impl(int x) { return x; }\n};",
        "set.add<K>([](int x) { return x + 1; })",
        "hookset::sync_wait(set.call<K>(3)) == 7"),
    "concurrent": (
        "`int(int)`, Always + Aggregate<Sum> + Concurrent",
        SUM +
        "struct K : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>,\n"
        "                         hookset::Concurrent> {\n"
        "  static int default_impl(int x) { return x; }\n};",
        "set.add<K>([](int x) { return x + 1; })",
        "hookset::sync_wait(set.call<K>(3)) == 7"),
    "pipeline": (
        "`int(int)`, Pipeline",
        "struct K : hookset::Slot<int(int), hookset::Pipeline> {\n"
        "  static int default_impl(int x) { return x; }\n};",
        "set.add<K>([](const int& x) -> hookset::decision_t<K> { return hookset::rewrite(x + 1); })",
        "hookset::sync_wait(set.call<K>(3)).output() == 4"),
    "verdict": (
        "`Verdict<>(int)`, VerdictSlot (Always)",
        "struct K : hookset::VerdictSlot<hookset::Verdict<>(int), hookset::Always> {\n"
        "  static hookset::Verdict<> default_impl(int) { return {}; }\n};",
        "set.add<K>([](int x) { return hookset::Verdict<>{x > 2 ? hookset::Permission::deny\n"
        "                                                       : hookset::Permission::allow, \"big\"}; })",
        "hookset::sync_wait(set.call<K>(3)).decision == hookset::Permission::deny"),
    "coroutine-hook": (
        "a second `int(int)` Always fold whose hook is a `Task<int>` coroutine: the driver",
        "struct K : hookset::Slot<int(int), hookset::Always> {\n"
        "  static int default_impl(int x) { return x + 1; }\n};",
        "set.add<K>([](int x, std::optional<int> last) -> hookset::Task<int> {\n"
        "    co_return *last + x + 1;\n  })",
        "hookset::sync_wait(set.call<K>(3)) == 8"),
}


def hookset_program(slots: list[tuple[str, str, str, str]], names: list[str]) -> str:
    lines = ["#include <hookset/hookset.hpp>", "", "#include <optional>", "#include <vector>", "",
             "namespace {", ""]
    lines += [declare for _, declare, _, _ in slots]
    lines += ["", f"using Hooks = hookset::HookSet<{', '.join(names)}>;", "", "}  // namespace", "",
              "int main() {", "  Hooks set;"]
    lines += [f"  {hook};" for _, _, hook, _ in slots]
    lines += ["  bool ok = true;"] + [f"  ok &= {check};" for _, _, _, check in slots]
    return "\n".join(lines + ["  return ok ? 0 : 1;", "}", ""])


PROGRAMS = {
    "empty": "int main() { return 0; }\n",
    "included": "#include <hookset/hookset.hpp>\n\nint main() { return 0; }\n",
    "std::function": (
        "#include <functional>\n#include <vector>\n\n"
        "namespace {\n"
        "int fold(int (*default_impl)(int), const std::vector<std::function<int(int, int)>>& hooks, int x) {\n"
        "  int last = default_impl(x);\n"
        "  for (const auto& hook : hooks) last = hook(x, last);\n"
        "  return last;\n"
        "}\n"
        "int default_impl(int x) { return x; }\n"
        "}  // namespace\n\n"
        "int main() {\n"
        "  std::vector<std::function<int(int, int)>> hooks;\n"
        "  hooks.push_back([](int x, int last) { return last + x; });\n"
        "  return fold(default_impl, hooks, 3) == 6 ? 0 : 1;\n"
        "}\n"),
    "plain": hookset_program([PLAIN], ["P"]),
}
PROGRAMS.update({f"plain + {kind}": hookset_program([PLAIN, slot], ["P", "K"])
                 for kind, slot in KINDS.items()})
# Separate compilation (HOOKSET_SEPARATE_COMPILATION): these programs, compiled with the macro,
# and the one file such a program adds.
SEPARATE = {"plain, separate": "plain", "plain + fold-signature, separate": "plain + fold-signature"}
SOURCE_FILE = "impl/src.hpp, separate (once per program)"
PROGRAMS.update({name: PROGRAMS[base] for name, base in SEPARATE.items()})
PROGRAMS[SOURCE_FILE] = "#include <hookset/impl/src.hpp>\n"


def collapse(name: str) -> str:
    """A demangled name with every template argument list and parameter list shortened to
    `<…>` and `(…)`, so that instances of one function read as one name."""
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            if depth == 0:
                out.append(ch + "…")
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
            if depth == 0:
                out.append(ch)
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace("operator<…>", "operator<").strip()


def functions(obj: str) -> list[tuple[int, str]]:
    """(bytes, demangled name) of every function in the object, largest first. Read with
    `readelf -sW -C` rather than `nm -S --size-sort -C` so that aliases (a constructor's complete
    and base object versions share their code) count once: one function per section and offset."""
    out = subprocess.run(["readelf", "-sW", "-C", obj], capture_output=True, text=True, check=True).stdout
    found: dict[tuple[str, str], tuple[int, str]] = {}
    for line in out.splitlines():
        m = re.match(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+FUNC\s+\S+\s+\S+\s+(\d+)\s+(.*)$", line)
        if m and int(m.group(2)) > 0:
            found.setdefault((m.group(3), m.group(1)), (int(m.group(2)), m.group(4)))
    return sorted(found.values(), reverse=True)


def owner(name: str) -> str:
    """Where a function belongs: its class or namespace, shortened as by collapse() (the
    coroutine clones of one function, `.actor`, `.resume`, `.destroy`, go with it)."""
    short = re.sub(r" \[clone [^]]*\]", "", collapse(name)).split("(…")[0]
    short = short.split(" ")[-1]  # past a return type (collapse() leaves no space inside <…>)
    return short.rsplit("::", 1)[0] if "::" in short else "(global)"


def by_owner(found: list[tuple[int, str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for size, name in found:
        out[owner(name)] = out.get(owner(name), 0) + size
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compilers", nargs="+", default=None, help="default: g++-12 (or g++)")
    parser.add_argument("--include", nargs="+", default=[os.path.join(ROOT, "include")],
                        help="hookset's include directory; several: one column each")
    parser.add_argument("--flags", default="-O2", help="optimisation flags (default -O2)")
    parser.add_argument("--top", type=int, default=15, help="functions to list (default 15)")
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS),
                        help="the kinds to add to the plain slot (default: all; fold-signature is "
                             "needed to separate slot-independent code)")
    parser.add_argument("--run", action="store_true", help="also link and run every program")
    args = parser.parse_args(argv)
    compilers = args.compilers or [next((c for c in ("g++-12", "g++") if shutil.which(c)), "g++")]
    flags = [*args.flags.split(), "-std=c++20"]

    columns = [(c, inc) for c in compilers for inc in args.include]
    sizes: dict[tuple[str, str, str], int] = {}
    tops: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    status = 0
    with tempfile.TemporaryDirectory(prefix="hookset-object-size-") as work:
        programs = {name: text for name, text in PROGRAMS.items()
                    if not name.startswith("plain + ") or
                    name[len("plain + "):].removesuffix(", separate") in args.kinds}
        # The source file first: the separate programs link with it.
        programs = {SOURCE_FILE: programs.pop(SOURCE_FILE), **programs}
        for index, (name, text) in enumerate(programs.items()):
            source = os.path.join(work, f"p{index}.cpp")
            with open(source, "w", encoding="utf-8") as f:
                f.write(text)
            separate = name == SOURCE_FILE or name in SEPARATE
            for column, (c, inc) in enumerate(columns):
                if separate and not os.path.exists(os.path.join(inc, "hookset", "impl", "src.hpp")):
                    continue  # a hookset without separate compilation: "–"
                print(f"[object-size] {c} {inc}: {name}", file=sys.stderr, flush=True)
                obj = os.path.join(work, f"p{index}-{column}.o")
                defines = ["-DHOOKSET_SEPARATE_COMPILATION"] if separate else []
                proc = subprocess.run([c, *flags, *defines, "-I", inc, "-c", source, "-o", obj],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"[object-size] {name} failed to compile:\n{proc.stderr[:2000]}", file=sys.stderr)
                    status = 1
                    continue
                sizes[c, inc, name] = text_bytes(obj)
                if name in ("plain", "plain + fold-signature"):
                    tops[c, inc, name] = functions(obj)
                if args.run and name != SOURCE_FILE:
                    exe = obj[:-2] + ".exe"
                    objects = [obj] + ([os.path.join(work, f"p0-{column}.o")] if separate else [])
                    ran = subprocess.run([c, *objects, "-pthread", "-o", exe],
                                         capture_output=True).returncode == 0 \
                        and subprocess.run([exe]).returncode == 0
                    if not ran:
                        print(f"[object-size] {name}: link or run FAILED", file=sys.stderr)
                        status = 1

    def kb(value: int | None) -> str:
        return "–" if value is None else f"{value / 1024:.1f}"

    several = len(columns) > 1
    heads = [f"{compiler_label(c)}" + (f" {inc}" if len(args.include) > 1 else "") for c, inc in columns]
    print(f"## object code: `.text` of one file (`{' '.join(flags)}`, KB = 1024 bytes, all `.text*` sections)")
    print()
    print("| file | " + " | ".join(heads) + " |")
    print("|---|" + "--:|" * len(columns))
    for name in programs:
        print(f"| {name} | " + " | ".join(kb(sizes.get((c, inc, name))) for c, inc in columns) + " |")
    print()
    print("| hookset code | " + " | ".join(heads) + " |")
    print("|---|" + "--:|" * len(columns))

    def derived(c: str, inc: str) -> dict[str, int | None]:
        get = lambda name: sizes.get((c, inc, name))  # noqa: E731
        out: dict[str, int | None] = {}
        plain, empty, fold = get("plain"), get("empty"), get("plain + fold-signature")
        if None not in (plain, empty, fold):
            out["one plain slot, dispatched (plain - empty)"] = plain - empty
            out["of which slot-independent (plain - empty - a fold kind)"] = plain - empty - (fold - plain)
        for kind, slot in KINDS.items():
            if plain is not None and get(f"plain + {kind}") is not None:
                out[f"per kind: {kind} ({slot[0]})"] = get(f"plain + {kind}") - plain
        plain, fold = get("plain, separate"), get("plain + fold-signature, separate")
        if None not in (plain, empty, fold):
            out["separate: one plain slot, dispatched (plain - empty)"] = plain - empty
            out["separate: of which slot-independent (plain - empty - a fold kind)"] = \
                plain - empty - (fold - plain)
            out["separate: per kind: fold-signature"] = fold - plain
        if get(SOURCE_FILE) is not None:
            out["separate: impl/src.hpp, compiled once per program"] = get(SOURCE_FILE)
        return out

    table = {col: derived(*col) for col in columns}
    for row in dict.fromkeys(r for col in columns for r in table[col]):
        print(f"| {row} | " + " | ".join(kb(table[col].get(row)) for col in columns) + " |")
    print()
    print("Targets (issue 39, GCC -O2): slot-independent code ≤ 12 KB header-only and none with separate\n"
          "compilation, each slot kind ≤ 8 KB.")
    print()
    for (c, inc, program), found in tops.items():
        if program != "plain":
            continue
        total = sum(size for size, _ in found)
        mine = sum(size for size, name in found if "hookset::" in name)
        print(f"### the largest functions of `plain` ({compiler_label(c)}" + (f", {inc}" if several else "") +
              f"): {total / 1024:.1f} KB in {len(found)} functions, {mine / 1024:.1f} KB of it naming hookset")
        print()
        print("| bytes | function (template and parameter lists shortened to `<…>`, `(…)`) |")
        print("|--:|---|")
        for size, name in found[:args.top]:
            print(f"| {size:,} | `{collapse(name)}` |")
        grouped: dict[str, list[int]] = {}
        for size, name in found:
            grouped.setdefault(collapse(name), []).append(size)
        repeated = sorted(((sum(v), len(v), k) for k, v in grouped.items() if len(v) > 1), reverse=True)
        if repeated:
            print()
            print("Names instantiated more than once: " + "; ".join(
                f"`{name}` ×{count}, {total:,} bytes" for total, count, name in repeated[:6]) + ".")
        print()
        # The same bytes by class or namespace, beside what a fold of another signature adds:
        # the rows that grow are instantiated per slot kind, the others are paid once.
        other = tops.get((c, inc, "plain + fold-signature"))
        if other is None:
            continue
        mine_by, other_by = by_owner(found), by_owner(other)
        print("| class or namespace | bytes in `plain` | added by a fold of another signature |")
        print("|---|--:|--:|")
        for where in sorted(mine_by, key=lambda w: -mine_by[w])[:args.top]:
            print(f"| `{where}` | {mine_by[where]:,} | {other_by.get(where, 0) - mine_by[where]:+,} |")
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
