// The built-in chain companions (docs/semantics.md, "Companions"): hookset::ShortCircuit breaks on
// the first output whose has_value() is false, hookset::FirstSuccess on the first whose has_value()
// is true. Exercised on their own and as the Chain of Always / Fallback slots, with
// std::optional, a custom type with has_value(), boost::outcome and (where the standard library
// has it) std::expected.
//
// The default and every hook append to one log, so each test checks the full sequence of calls.
#include "hookset_catch.hpp"

#include "test_support.hpp"

#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>

#if __has_include(<expected>)
#include <expected>
#endif
#if __has_include(<boost/outcome/std_result.hpp>)
#include <boost/outcome/std_result.hpp>
#define HOOKSET_TEST_HAS_OUTCOME 1
#else
#define HOOKSET_TEST_HAS_OUTCOME 0
#endif

namespace {

using hookset::Flow;
using test_support::calls;
using test_support::fresh_log;
using test_support::Log;

using MaybeInt = std::optional<int>;

std::string show(const MaybeInt& value) {
  return value ? std::to_string(*value) : std::string("nullopt");
}

// A result type of our own: has_value() is all the built-ins need.
struct Verdict {
  bool ok = true;
  std::string reason;
  bool has_value() const noexcept { return ok; }
  static Verdict pass() { return {}; }
  static Verdict fail(std::string why) { return {false, std::move(why)}; }
};

// ---- slots -------------------------------------------------------------------------------------

// A validation gate: every check runs until one fails.
struct ValidateGate
    : hookset::Slot<MaybeInt(int), hookset::Always, hookset::Chain<hookset::ShortCircuit>> {
  static MaybeInt default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    if (x < 0) return std::nullopt;
    return x;
  }
};
// The same gate, collecting every output it saw.
struct ValidateAll
    : hookset::Slot<MaybeInt(int), hookset::Always, hookset::Chain<hookset::ShortCircuit>,
                    hookset::Aggregate<struct CountOutputs>> {
  static MaybeInt default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return x;
  }
};
struct CountOutputs {
  MaybeInt operator()(std::vector<MaybeInt> outputs) const {
    std::string text = "aggregate{";
    for (std::size_t i = 0; i < outputs.size(); ++i) text += (i ? "," : "") + show(outputs[i]);
    calls.push_back(text + "}");
    return static_cast<int>(outputs.size());
  }
};

struct VerdictGate
    : hookset::Slot<Verdict(std::string), hookset::Always, hookset::Chain<hookset::ShortCircuit>> {
  static Verdict default_impl(const std::string& text) {
    calls.push_back("default(" + text + ")");
    return text.empty() ? Verdict::fail("empty") : Verdict::pass();
  }
};

// Model choice: the first hook that knows the answer wins; the default if nobody does.
struct ChooseModel : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Fallback,
                                   hookset::Chain<hookset::FirstSuccess>> {
  static hookset::Task<std::optional<std::string>> default_impl(std::string_view task) {
    calls.push_back("default(" + std::string(task) + ")");
    co_return "small";
  }
};
// FirstSuccess on an Always slot: a default with a value ends the dispatch at once.
struct Lookup
    : hookset::Slot<MaybeInt(int), hookset::Always, hookset::Chain<hookset::FirstSuccess>> {
  static MaybeInt default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    if (x == 0) return std::nullopt;
    return x;
  }
};

#if HOOKSET_TEST_HAS_OUTCOME
namespace outcome = boost::outcome_v2;
using OutcomeInt = outcome::std_result<int>;
struct OutcomeGate
    : hookset::Slot<OutcomeInt(int), hookset::Fallback, hookset::Chain<hookset::ShortCircuit>> {
  static OutcomeInt default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return x;
  }
};
#endif

#if __has_include(<expected>) && defined(__cpp_lib_expected)
using ExpectedInt = std::expected<int, std::string>;
struct ExpectedGate
    : hookset::Slot<ExpectedInt(int), hookset::Always, hookset::Chain<hookset::ShortCircuit>> {
  static ExpectedInt default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    if (x < 0) return std::unexpected("negative");
    return x;
  }
};
struct ExpectedFirst
    : hookset::Slot<ExpectedInt(int), hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static ExpectedInt default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return x;
  }
};
#endif

using Set = hookset::HookSet<ValidateGate, ValidateAll, VerdictGate, ChooseModel, Lookup
#if HOOKSET_TEST_HAS_OUTCOME
                             ,
                             OutcomeGate
#endif
#if __has_include(<expected>) && defined(__cpp_lib_expected)
                             ,
                             ExpectedGate, ExpectedFirst
#endif
                             >;

// ---- hooks
// ---------------------------------------------------------------------------------------

auto int_hook(std::string name, MaybeInt output) {
  return [name, output](int x) {
    calls.push_back(name + "(" + std::to_string(x) + ")");
    return output;
  };
}
auto async_int_hook(std::string name, MaybeInt output) {
  return [name, output](int x) -> hookset::Task<MaybeInt> {
    calls.push_back(name + "(" + std::to_string(x) + ")");
    co_return output;
  };
}
auto model_hook(std::string name, std::optional<std::string> answer) {
  return [name, answer](std::string_view task) {
    calls.push_back(name + "(" + std::string(task) + ")");
    return answer;
  };
}

}  // namespace

using hookset::sync_wait;

// ================================================================================================
// The companions on their own
// ================================================================================================

TEST_CASE("ShortCircuit: Continue on an output with a value, Break on one without") {
  constexpr hookset::ShortCircuit chain;
  STATIC_REQUIRE(chain(std::optional<int>(1)) == Flow::Continue);
  STATIC_REQUIRE(chain(std::optional<int>()) == Flow::Break);
  REQUIRE(chain(Verdict::pass()) == Flow::Continue);
  REQUIRE(chain(Verdict::fail("no")) == Flow::Break);
}

TEST_CASE("FirstSuccess: Break on an output with a value, Continue on one without") {
  constexpr hookset::FirstSuccess chain;
  STATIC_REQUIRE(chain(std::optional<int>(1)) == Flow::Break);
  STATIC_REQUIRE(chain(std::optional<int>()) == Flow::Continue);
  REQUIRE(chain(Verdict::pass()) == Flow::Break);
  REQUIRE(chain(Verdict::fail("no")) == Flow::Continue);
}

// ================================================================================================
// ShortCircuit with std::optional
// ================================================================================================

TEST_CASE("ShortCircuit+optional, no hooks: the default is returned, with or without a value") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<ValidateGate>(3)) == MaybeInt(3));
  REQUIRE(sync_wait(set.call<ValidateGate>(-3)) == std::nullopt);
  REQUIRE(log == Log{"default(3)", "default(-3)"});
}

TEST_CASE("ShortCircuit+optional: a default without a value stops the gate before any hook") {
  Log& log = fresh_log();
  Set set;
  set.add<ValidateGate>(int_hook("h1", 1));
  REQUIRE(sync_wait(set.call<ValidateGate>(-1)) == std::nullopt);
  REQUIRE(log == Log{"default(-1)"});
}

TEST_CASE(
    "ShortCircuit+optional: the first hook output without a value is returned, later hooks "
    "skipped") {
  Log& log = fresh_log();
  Set set;
  set.add<ValidateGate>(int_hook("h1", 10));
  set.add<ValidateGate>(async_int_hook("h2", std::nullopt));
  set.add<ValidateGate>(int_hook("h3", 30));
  REQUIRE(sync_wait(set.call<ValidateGate>(1)) == std::nullopt);
  REQUIRE(log == Log{"default(1)", "h1(1)", "h2(1)"});
}

TEST_CASE(
    "ShortCircuit+optional: when every output has a value, the last hook's output is returned") {
  Log& log = fresh_log();
  Set set;
  set.add<ValidateGate>(int_hook("h1", 10));
  set.add<ValidateGate>(async_int_hook("h2", 20));
  REQUIRE(sync_wait(set.call<ValidateGate>(1)) == MaybeInt(20));
  REQUIRE(log == Log{"default(1)", "h1(1)", "h2(1)"});
}

TEST_CASE(
    "ShortCircuit+optional with an Aggregate: the failing output is the last one aggregated") {
  Log& log = fresh_log();
  Set set;
  set.add<ValidateAll>(int_hook("h1", 10));
  set.add<ValidateAll>(int_hook("h2", std::nullopt));
  set.add<ValidateAll>(int_hook("h3", 30));
  REQUIRE(sync_wait(set.call<ValidateAll>(1)) == MaybeInt(3));
  REQUIRE(log == Log{"default(1)", "h1(1)", "h2(1)", "aggregate{1,10,nullopt}"});
}

// ================================================================================================
// ShortCircuit with a custom has_value() type
// ================================================================================================

TEST_CASE("ShortCircuit+custom type: all pass: the last hook's verdict") {
  Log& log = fresh_log();
  Set set;
  set.add<VerdictGate>([](const std::string& text) {
    calls.push_back("length(" + text + ")");
    return text.size() < 10 ? Verdict::pass() : Verdict::fail("too long");
  });
  set.add<VerdictGate>([](const std::string& text) {
    calls.push_back("ascii(" + text + ")");
    return Verdict{true, "ascii ok"};
  });
  const Verdict verdict = sync_wait(set.call<VerdictGate>(std::string("hello")));
  REQUIRE(verdict.has_value());
  REQUIRE(verdict.reason == "ascii ok");
  REQUIRE(log == Log{"default(hello)", "length(hello)", "ascii(hello)"});
}

TEST_CASE("ShortCircuit+custom type: the first failing verdict is returned, later checks skipped") {
  Log& log = fresh_log();
  Set set;
  set.add<VerdictGate>([](const std::string& text) -> hookset::Task<Verdict> {
    calls.push_back("length(" + text + ")");
    co_return text.size() < 3 ? Verdict::pass() : Verdict::fail("too long");
  });
  set.add<VerdictGate>([](const std::string& text) {
    calls.push_back("ascii(" + text + ")");
    return Verdict::pass();
  });
  const Verdict verdict = sync_wait(set.call<VerdictGate>(std::string("hello")));
  REQUIRE_FALSE(verdict.has_value());
  REQUIRE(verdict.reason == "too long");
  REQUIRE(log == Log{"default(hello)", "length(hello)"});

  fresh_log();
  const Verdict empty = sync_wait(set.call<VerdictGate>(std::string()));
  REQUIRE(empty.reason == "empty");
  REQUIRE(log == Log{"default()"});
}

#if HOOKSET_TEST_HAS_OUTCOME
TEST_CASE("ShortCircuit+boost::outcome result on a Fallback slot") {
  Log& log = fresh_log();
  Set set;
  set.add<OutcomeGate>([](int x) -> OutcomeInt {
    calls.push_back("h1(" + std::to_string(x) + ")");
    return x + 1;
  });
  set.add<OutcomeGate>([](int x) -> OutcomeInt {
    calls.push_back("h2(" + std::to_string(x) + ")");
    if (x > 5) return std::make_error_code(std::errc::result_out_of_range);
    return x + 2;
  });
  // All succeed: Fallback+Chain runs the default at the end and returns it.
  const OutcomeInt ok = sync_wait(set.call<OutcomeGate>(1));
  REQUIRE(ok.has_value());
  REQUIRE(ok.value() == 1);
  // h2 fails: its error is the result, the default does not run.
  const OutcomeInt failed = sync_wait(set.call<OutcomeGate>(9));
  REQUIRE_FALSE(failed.has_value());
  REQUIRE(failed.error() == std::make_error_code(std::errc::result_out_of_range));
  REQUIRE(log == Log{"h1(1)", "h2(1)", "default(1)", "h1(9)", "h2(9)"});
}
#endif

#if __has_include(<expected>) && defined(__cpp_lib_expected)
TEST_CASE("ShortCircuit+std::expected: the first unexpected output is returned") {
  Log& log = fresh_log();
  Set set;
  set.add<ExpectedGate>([](int x) -> ExpectedInt {
    calls.push_back("h1(" + std::to_string(x) + ")");
    if (x > 5) return std::unexpected("too big");
    return x * 2;
  });
  set.add<ExpectedGate>([](int x) -> ExpectedInt {
    calls.push_back("h2(" + std::to_string(x) + ")");
    return x * 3;
  });
  REQUIRE(sync_wait(set.call<ExpectedGate>(1)) == ExpectedInt(3));
  REQUIRE(sync_wait(set.call<ExpectedGate>(9)).error() == "too big");
  REQUIRE(sync_wait(set.call<ExpectedGate>(-1)).error() == "negative");
  REQUIRE(log == Log{"default(1)", "h1(1)", "h2(1)", "default(9)", "h1(9)", "default(-1)"});
}

TEST_CASE("FirstSuccess+std::expected: the first expected output wins") {
  Log& log = fresh_log();
  Set set;
  set.add<ExpectedFirst>([](int x) -> ExpectedInt {
    calls.push_back("h1(" + std::to_string(x) + ")");
    return std::unexpected("h1 does not know");
  });
  set.add<ExpectedFirst>([](int x) -> ExpectedInt {
    calls.push_back("h2(" + std::to_string(x) + ")");
    return x * 5;
  });
  REQUIRE(sync_wait(set.call<ExpectedFirst>(2)) == ExpectedInt(10));
  REQUIRE(log == Log{"h1(2)", "h2(2)"});
}
#endif

// ================================================================================================
// FirstSuccess with std::optional
// ================================================================================================

TEST_CASE("FirstSuccess+optional on Fallback, no hooks: the (async) default answers") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<ChooseModel>("summarise")) == std::optional<std::string>("small"));
  REQUIRE(log == Log{"default(summarise)"});
}

TEST_CASE(
    "FirstSuccess+optional on Fallback: the first hook with a value wins, later hooks and the "
    "default skipped") {
  Log& log = fresh_log();
  Set set;
  set.add<ChooseModel>(model_hook("cheap", std::nullopt));
  set.add<ChooseModel>(model_hook("expert", "large"));
  set.add<ChooseModel>(model_hook("never", "other"));
  REQUIRE(sync_wait(set.call<ChooseModel>("prove")) == std::optional<std::string>("large"));
  REQUIRE(log == Log{"cheap(prove)", "expert(prove)"});
}

TEST_CASE("FirstSuccess+optional on Fallback: nobody knows, so the default runs last and answers") {
  Log& log = fresh_log();
  Set set;
  set.add<ChooseModel>(model_hook("a", std::nullopt));
  set.add<ChooseModel>([](std::string_view task) -> hookset::Task<std::optional<std::string>> {
    calls.push_back("b(" + std::string(task) + ")");
    co_return std::nullopt;
  });
  REQUIRE(sync_wait(set.call<ChooseModel>("chat")) == std::optional<std::string>("small"));
  REQUIRE(log == Log{"a(chat)", "b(chat)", "default(chat)"});
}

TEST_CASE(
    "FirstSuccess+optional on Always: a default with a value ends the dispatch before any hook") {
  Log& log = fresh_log();
  Set set;
  set.add<Lookup>(int_hook("h1", 10));
  REQUIRE(sync_wait(set.call<Lookup>(4)) == MaybeInt(4));
  REQUIRE(log == Log{"default(4)"});
}

TEST_CASE(
    "FirstSuccess+optional on Always: an empty default lets hooks run until one has a value") {
  Log& log = fresh_log();
  Set set;
  set.add<Lookup>(int_hook("h1", std::nullopt));
  set.add<Lookup>(async_int_hook("h2", 20));
  set.add<Lookup>(int_hook("h3", 30));
  REQUIRE(sync_wait(set.call<Lookup>(0)) == MaybeInt(20));
  REQUIRE(log == Log{"default(0)", "h1(0)", "h2(0)"});
}

TEST_CASE(
    "FirstSuccess+optional on Always: no output has a value: the last hook's (empty) output") {
  Log& log = fresh_log();
  Set set;
  set.add<Lookup>(int_hook("h1", std::nullopt));
  set.add<Lookup>(int_hook("h2", std::nullopt));
  REQUIRE(sync_wait(set.call<Lookup>(0)) == std::nullopt);
  REQUIRE(log == Log{"default(0)", "h1(0)", "h2(0)"});
}
