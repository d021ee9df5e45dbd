#!/usr/bin/env python3
"""Generates one translation unit of N slots, every slot registered and called, for measuring
what hookset costs the compiler; and the same program written with std::function, for reference.

    python3 benchmarks/compile_cost/generate.py 64 > slots_64.cpp
    python3 benchmarks/compile_cost/generate.py 64 --mode uniform -o uniform_64.cpp

Modes:
  mixed        (the default) a hookset::HookSet of N slots cycling through the kinds an
               application declares (a realistic mix, not one specialisation N times):
                 0 Always fold, synchronous hook          3 Always + Aggregate<Sum>
                 1 Fallback fold, synchronous hook        4 Singleton
                 2 Always + Chain<ShortCircuit>           5 Always fold, coroutine hook (Task<int>)
  uniform      a hookset::HookSet of N slots of one signature, int(std::string_view), Always:
               each registered with a lambda and dispatched once (the plain "many slots" case)
  stdfunction  the uniform program without hookset: per slot a default function and a
               std::vector<std::function<int(std::string_view, int)>> with one lambda pushed,
               folded once by one loop (what the same program costs written by hand)
Every slot has its own default and its own hook lambda. main() registers one hook per slot,
calls every slot once (hookset: with sync_wait) and returns 0 when every result is the expected
one (so the program also checks itself when linked and run).
"""

from __future__ import annotations

import argparse
import sys

KINDS = 6
MODES = ["mixed", "uniform", "stdfunction"]


def slot_declaration(i: int, kind: int | None = None) -> str:
    kind = i % KINDS if kind is None else kind
    name = f"S{i}"
    if kind == 0:
        return (f"struct {name} : hookset::Slot<int(std::string_view), hookset::Always> {{\n"
                f"  static int default_impl(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}\n"
                f"}};")
    if kind == 1:
        return (f"struct {name} : hookset::Slot<int(std::string_view), hookset::Fallback> {{\n"
                f"  static int default_impl(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}\n"
                f"}};")
    if kind == 2:
        return (f"struct {name} : hookset::Slot<std::optional<int>(std::string_view), hookset::Always,\n"
                f"                               hookset::Chain<hookset::ShortCircuit>> {{\n"
                f"  static std::optional<int> default_impl(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}\n"
                f"}};")
    if kind == 3:
        return (f"struct {name} : hookset::Slot<int(std::string_view), hookset::Always, hookset::Aggregate<Sum>> {{\n"
                f"  static int default_impl(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}\n"
                f"}};")
    if kind == 4:
        return (f"struct {name} : hookset::Slot<int(std::string_view), hookset::Singleton> {{\n"
                f"  static int default_impl(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}\n"
                f"}};")
    return (f"struct {name} : hookset::Slot<int(std::string_view), hookset::Always> {{\n"
            f"  static int default_impl(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}\n"
            f"}};")


def registration(i: int, kind: int | None = None) -> str:
    kind = i % KINDS if kind is None else kind
    name = f"S{i}"
    if kind in (0, 1):
        return (f"  set.add<{name}>([](std::string_view s, std::optional<int> last) {{ "
                f"return last.value_or(0) + static_cast<int>(s.size()) + {i}; }});")
    if kind == 2:
        return (f"  set.add<{name}>([](std::string_view s) -> std::optional<int> {{ "
                f"return static_cast<int>(s.size()) + {i}; }});")
    if kind in (3, 4):
        return f"  set.add<{name}>([](std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }});"
    return (f"  set.add<{name}>([](std::string_view s, std::optional<int> last) -> hookset::Task<int> {{ "
            f"co_return *last + static_cast<int>(s.size()) + {i}; }});")


def expected(i: int, length: int, kind: int | None = None) -> int:
    """The value the dispatch of slot i (of `kind`, default i's place in the cycle) returns for an
    input of `length` characters."""
    kind = i % KINDS if kind is None else kind
    default = length + i
    hook = length + i
    if kind in (0, 5):
        return default + hook  # Always fold: default, then last + size + i
    if kind == 1:
        return hook            # Fallback: the default does not run; value_or(0) + size + i
    if kind == 2:
        return hook            # Chain: no Break, the last hook's output
    if kind == 3:
        return default + hook  # Aggregate<Sum>({default, hook})
    return hook                # Singleton: the hook replaces the default


def call(i: int, kind: int | None = None) -> str:
    kind = i % KINDS if kind is None else kind
    name = f"S{i}"
    if kind == 2:
        return f"  ok &= *hookset::sync_wait(set.call<{name}>(input)) == {expected(i, 5, kind)};"
    return f"  ok &= hookset::sync_wait(set.call<{name}>(input)) == {expected(i, 5, kind)};"


def generate_uniform(n: int) -> str:
    """N slots of one signature (Always fold), each with a lambda, each dispatched once."""
    names = ", ".join(f"S{i}" for i in range(n))
    parts = [
        f"// Generated by benchmarks/compile_cost/generate.py {n} --mode uniform: a HookSet of {n} slots",
        "// of one signature, each registered with a lambda and called once. Measures compile cost;",
        "// also a self-checking program.",
        "#include <hookset/hookset.hpp>",
        "",
        "#include <optional>",
        "#include <string_view>",
        "",
        "namespace {",
        "",
    ]
    parts += [slot_declaration(i, kind=0) for i in range(n)]  # kind 0: Always fold
    parts += ["", f"using Hooks = hookset::HookSet<{names}>;", "", "}  // namespace", "", "int main() {",
              "  Hooks set;"]
    parts += [registration(i, kind=0) for i in range(n)]
    parts += ["  const std::string_view input = \"hello\";", "  bool ok = true;"]
    parts += [call(i, kind=0) for i in range(n)]
    parts += ["  return ok ? 0 : 1;", "}", ""]
    return "\n".join(parts)


def generate_stdfunction(n: int) -> str:
    """The uniform program with a std::vector<std::function> per slot instead of hookset."""
    parts = [
        f"// Generated by benchmarks/compile_cost/generate.py {n} --mode stdfunction: {n} slots written",
        "// by hand, each a default function and a std::vector<std::function> with one lambda, folded",
        "// once. The reference for the uniform HookSet of the same size; also a self-checking program.",
        "#include <functional>",
        "#include <string_view>",
        "#include <vector>",
        "",
        "namespace {",
        "",
        "using Hook = std::function<int(std::string_view, int)>;",
        "",
        "int fold(int (*default_impl)(std::string_view), const std::vector<Hook>& hooks, std::string_view s) {",
        "  int last = default_impl(s);",
        "  for (const Hook& hook : hooks) last = hook(s, last);",
        "  return last;",
        "}",
        "",
    ]
    parts += [f"int default_{i}(std::string_view s) {{ return static_cast<int>(s.size()) + {i}; }}"
              for i in range(n)]
    parts += ["", "struct Hooks {"]
    parts += [f"  std::vector<Hook> s{i};" for i in range(n)]
    parts += ["};", "", "}  // namespace", "", "int main() {", "  Hooks hooks;"]
    parts += [f"  hooks.s{i}.push_back([](std::string_view s, int last) {{ "
              f"return last + static_cast<int>(s.size()) + {i}; }});" for i in range(n)]
    parts += ["  const std::string_view input = \"hello\";", "  bool ok = true;"]
    parts += [f"  ok &= fold(default_{i}, hooks.s{i}, input) == {expected(i, 5, kind=0)};" for i in range(n)]
    parts += ["  return ok ? 0 : 1;", "}", ""]
    return "\n".join(parts)


def generate(n: int, mode: str = "mixed") -> str:
    if n < 1:
        raise ValueError("need at least one slot")
    if mode == "uniform":
        return generate_uniform(n)
    if mode == "stdfunction":
        return generate_stdfunction(n)
    if mode != "mixed":
        raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
    names = ", ".join(f"S{i}" for i in range(n))
    parts = [
        f"// Generated by benchmarks/compile_cost/generate.py {n}: a HookSet of {n} slots, every slot",
        "// registered and called. Measures compile cost; also a self-checking program.",
        "#include <hookset/hookset.hpp>",
        "",
        "#include <numeric>",
        "#include <optional>",
        "#include <string_view>",
        "#include <vector>",
        "",
        "namespace {",
        "",
        "struct Sum {",
        "  int operator()(std::vector<int> outputs) const { return std::accumulate(outputs.begin(), outputs.end(), 0); }",
        "};",
        "",
    ]
    parts += [slot_declaration(i) for i in range(n)]
    parts += [
        "",
        f"using Hooks = hookset::HookSet<{names}>;",
        "",
        "}  // namespace",
        "",
        "int main() {",
        "  Hooks set;",
    ]
    parts += [registration(i) for i in range(n)]
    parts += [
        "  const std::string_view input = \"hello\";",
        "  bool ok = true;",
    ]
    parts += [call(i) for i in range(n)]
    parts += [
        "  return ok ? 0 : 1;",
        "}",
        "",
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a HookSet of N slots (compile-cost TU).")
    parser.add_argument("slots", type=int, help="number of slots (8, 32, 64, 128, ...)")
    parser.add_argument("--mode", choices=MODES, default="mixed",
                        help="mixed slot kinds (default), uniform slots, or the std::function reference")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")
    args = parser.parse_args(argv)
    text = generate(args.slots, args.mode)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
