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

The events programs (issue 39: what a new user pays against the peers) declare N events that
cycle through four signature shapes, give each one handler and fire each once:
  0 void(int)                          a notification
  1 int(int)                           a fold: the result is the handlers' sum (seed 0)
  2 void(const std::string&)           a notification taking a string by reference
  3 bool(std::string_view, int)        a veto: true unless a handler says no; stops at the first no
written four ways, each as its library's tutorial would (the programs check their results too):
  events              hookset: a HookSet of N slots (Always; the fold seeded by a default of 0,
                      the veto an Always slot with a Chain companion that breaks on false),
                      fired with sync_wait (the synchronous path: every hook is synchronous)
  events_stdfunction  a std::vector<std::function> per event and one loop per shape
  events_signals2     a boost::signals2::signal per event; a Sum and an AllOf combiner
  events_sigcxx       a libsigc++ 3 sigc::signal per event; the same two as accumulators
                      (compile with `pkg-config --cflags sigc++-3.0`, link with its --libs)
"""

from __future__ import annotations

import argparse
import sys

KINDS = 6
MODES = ["mixed", "uniform", "stdfunction"]
# The events program, hookset's version first and then the peers', in the order tables show them.
EVENT_MODES = ["events", "events_stdfunction", "events_signals2", "events_sigcxx"]


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


# ---- the events programs ----------------------------------------------------------------------
# Event i has shape i % 4 and a handler of its own (its body names i). Every program fires the
# events with the same inputs and checks the same outcomes.
EVENT_INT = 3         # shapes 0 and 1
EVENT_TEXT = "hello"  # shapes 2 and 3
EVENT_MODULUS = 8     # shape 3


def event_outcome(i: int) -> tuple[int, int | bool | None]:
    """What firing event i adds to the program's sink, and what it returns (None: nothing)."""
    shape = i % 4
    if shape == 0:
        return EVENT_INT + i, None
    if shape == 1:
        return 0, EVENT_INT + i
    if shape == 2:
        return len(EVENT_TEXT) + i, None
    return 0, (len(EVENT_TEXT) + i) % EVENT_MODULUS != 0


def event_handler(i: int, fold: str) -> str:
    """Event i's handler as a lambda. A fold handler that sees the previous result adds to it
    (`fold`: "optional", hookset's `last`; "int", the loop's running value); the peers' handlers
    ("none") return their addend and the combiner sums."""
    shape = i % 4
    if shape == 0:
        return f"[](int x) {{ sink += x + {i}; }}"
    if shape == 1:
        if fold == "optional":
            return f"[](int x, std::optional<int> last) {{ return *last + x + {i}; }}"
        if fold == "int":
            return f"[](int x, int last) {{ return last + x + {i}; }}"
        return f"[](int x) {{ return x + {i}; }}"
    if shape == 2:
        return f"[](const std::string& s) {{ sink += static_cast<int>(s.size()) + {i}; }}"
    return f"[](std::string_view s, int n) {{ return (static_cast<int>(s.size()) + {i}) % n != 0; }}"


def event_main(n: int, connect: str, fire: dict[int, str], fold: str) -> list[str]:
    """main(): connects every handler, fires every event once, checks the results and the sink.
    `connect` and `fire` are format strings with {i}, {handler} and {args}."""
    lines = ["int main() {", "  Events events;"]
    lines += ["  " + connect.format(i=i, handler=event_handler(i, fold)) + ";" for i in range(n)]
    lines += [f"  const int input = {EVENT_INT};", f"  const std::string text = \"{EVENT_TEXT}\";",
              "  bool ok = true;"]
    for i in range(n):
        shape = i % 4
        args = "input" if shape < 2 else ("text" if shape == 2 else f"text, {EVENT_MODULUS}")
        call = fire[shape].format(i=i, args=args)
        _, result = event_outcome(i)
        lines.append(f"  {call};" if result is None else f"  ok &= {call} == {str(result).lower()};")
    sink = sum(event_outcome(i)[0] for i in range(n))
    return lines + [f"  ok &= sink == {sink};", "  return ok ? 0 : 1;", "}", ""]


def event_preamble(n: int, mode: str, what: str, includes: list[str]) -> list[str]:
    return ([f"// Generated by benchmarks/compile_cost/generate.py {n} --mode {mode}: {n} events in four",
             f"// signature shapes, one handler each, each fired once: {what}.",
             "// Measures compile cost; also a self-checking program."] +
            [f"#include <{h}>" if h else "" for h in includes] + ["", "namespace {", "", "int sink = 0;", ""])


# A Signals2 combiner and a libsigc++ accumulator have the same shape: a result_type and a call
# operator over the handlers' results as an iterator range (dereferencing runs the handler).
PEER_COMBINERS = {
    1: ["// The fold events: the handlers' results summed.",
        "struct Sum {",
        "  using result_type = int;",
        "  template <class It>",
        "  int operator()(It first, It last) const {",
        "    int total = 0;",
        "    for (; first != last; ++first) total += *first;",
        "    return total;",
        "  }",
        "};", ""],
    3: ["// The veto events: true unless a handler says no; the handlers after a no do not run.",
        "struct AllOf {",
        "  using result_type = bool;",
        "  template <class It>",
        "  bool operator()(It first, It last) const {",
        "    for (; first != last; ++first)",
        "      if (!*first) return false;",
        "    return true;",
        "  }",
        "};", ""],
}


def generate_events(n: int) -> str:
    """hookset: a HookSet of N slots, one synchronous hook each, each called once with sync_wait."""
    shapes = {i % 4 for i in range(n)}
    parts = event_preamble(n, "events", "hookset",
                           ["hookset/hookset.hpp", "", "optional", "string", "string_view"])
    if 3 in shapes:
        parts += ["// The veto events stop at the first hook that says no.",
                  "struct StopOnFalse {",
                  "  hookset::Flow operator()(const bool& yes) const {",
                  "    return yes ? hookset::Flow::Continue : hookset::Flow::Break;",
                  "  }",
                  "};", ""]
    slots = {
        0: "struct E{i} : hookset::Slot<void(int), hookset::Always> {{\n"
           "  static void default_impl(int) {{}}\n}};",
        1: "struct E{i} : hookset::Slot<int(int), hookset::Always> {{\n"
           "  static int default_impl(int) {{ return 0; }}\n}};",
        2: "struct E{i} : hookset::Slot<void(const std::string&), hookset::Always> {{\n"
           "  static void default_impl(const std::string&) {{}}\n}};",
        3: "struct E{i} : hookset::Slot<bool(std::string_view, int), hookset::Always, hookset::Chain<StopOnFalse>> {{\n"
           "  static bool default_impl(std::string_view, int) {{ return true; }}\n}};",
    }
    parts += [slots[i % 4].format(i=i) for i in range(n)]
    parts += ["", f"using Events = hookset::HookSet<{', '.join(f'E{i}' for i in range(n))}>;", "",
              "}  // namespace", ""]
    fire = dict.fromkeys(range(4), "hookset::sync_wait(events.call<E{i}>({args}))")
    parts += event_main(n, "events.add<E{i}>({handler})", fire, fold="optional")
    return "\n".join(parts)


def generate_events_stdfunction(n: int) -> str:
    """A std::vector<std::function> per event, one loop per shape."""
    shapes = {i % 4 for i in range(n)}
    parts = event_preamble(n, "events_stdfunction", "std::function loops written by hand",
                           ["functional", "string", "string_view", "vector"])
    loops = {
        0: ["void fire(const std::vector<std::function<void(int)>>& handlers, int x) {",
            "  for (const auto& handler : handlers) handler(x);", "}"],
        1: ["int fold(const std::vector<std::function<int(int, int)>>& handlers, int x) {",
            "  int last = 0;", "  for (const auto& handler : handlers) last = handler(x, last);",
            "  return last;", "}"],
        2: ["void fire(const std::vector<std::function<void(const std::string&)>>& handlers,",
            "          const std::string& s) {",
            "  for (const auto& handler : handlers) handler(s);", "}"],
        3: ["bool all_of(const std::vector<std::function<bool(std::string_view, int)>>& handlers,",
            "            std::string_view s, int n) {",
            "  for (const auto& handler : handlers)", "    if (!handler(s, n)) return false;",
            "  return true;", "}"],
    }
    for shape in sorted(shapes):
        parts += loops[shape] + [""]
    types = {0: "void(int)", 1: "int(int, int)", 2: "void(const std::string&)",
             3: "bool(std::string_view, int)"}
    parts += ["struct Events {"] + [f"  std::vector<std::function<{types[i % 4]}>> e{i};" for i in range(n)]
    parts += ["};", "", "}  // namespace", ""]
    fire = {0: "fire(events.e{i}, {args})", 1: "fold(events.e{i}, {args})",
            2: "fire(events.e{i}, {args})", 3: "all_of(events.e{i}, {args})"}
    parts += event_main(n, "events.e{i}.push_back({handler})", fire, fold="int")
    return "\n".join(parts)


def generate_events_peer(n: int, mode: str) -> str:
    """Boost.Signals2 or libsigc++ 3: a signal per event, the fold and veto events with a combiner."""
    shapes = {i % 4 for i in range(n)}
    if mode == "events_signals2":
        what, header = "Boost.Signals2", "boost/signals2/signal.hpp"
        signal = {0: "boost::signals2::signal<void(int)>", 1: "boost::signals2::signal<int(int), Sum>",
                  2: "boost::signals2::signal<void(const std::string&)>",
                  3: "boost::signals2::signal<bool(std::string_view, int), AllOf>"}
    else:
        what, header = "libsigc++ 3", "sigc++/sigc++.h"
        signal = {0: "sigc::signal<void(int)>", 1: "sigc::signal<int(int)>::accumulated<Sum>",
                  2: "sigc::signal<void(const std::string&)>",
                  3: "sigc::signal<bool(std::string_view, int)>::accumulated<AllOf>"}
    parts = event_preamble(n, mode, what, [header, "", "string", "string_view"])
    for shape in sorted(shapes & set(PEER_COMBINERS)):
        parts += PEER_COMBINERS[shape]
    parts += ["struct Events {"] + [f"  {signal[i % 4]} e{i};" for i in range(n)]
    parts += ["};", "", "}  // namespace", ""]
    parts += event_main(n, "events.e{i}.connect({handler})", dict.fromkeys(range(4), "events.e{i}({args})"),
                        fold="none")
    return "\n".join(parts)


def generate(n: int, mode: str = "mixed") -> str:
    if n < 1:
        raise ValueError("need at least one slot")
    if mode == "uniform":
        return generate_uniform(n)
    if mode == "stdfunction":
        return generate_stdfunction(n)
    if mode == "events":
        return generate_events(n)
    if mode == "events_stdfunction":
        return generate_events_stdfunction(n)
    if mode in ("events_signals2", "events_sigcxx"):
        return generate_events_peer(n, mode)
    if mode != "mixed":
        raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES + EVENT_MODES)})")
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
    parser.add_argument("--mode", choices=MODES + EVENT_MODES, default="mixed",
                        help="mixed slot kinds (default), uniform slots, the std::function reference, "
                             "or the events program (hookset or a peer)")
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
