// Values in observer events and traces, opt-in: an observer (wants_values) or a slot
// (trace_values) asks; the pipeline input each hook saw, what its decision carried, and each
// dispatch's result then reach the observers, rendered through hookset_format (found by ADL) or
// hookset::value_format. Nothing is rendered when nobody asked: a counting formatter proves it.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>
#include <hookset/trace.hpp>

using hookset::Task;

namespace app {
struct Call {
  std::string args;
};
inline int formatted = 0;  // calls of hookset_format(Call)
inline std::string hookset_format(const Call& call) {
  ++formatted;
  return "call<" + call.args + ">";
}
struct Opaque {};  // no rendering
}  // namespace app

namespace {

struct Gate : hookset::Slot<int(app::Call), hookset::Pipeline> {
  static int default_impl(const app::Call& call) { return static_cast<int>(call.args.size()); }
};
struct Fold : hookset::Slot<app::Call(int), hookset::Always> {
  static app::Call default_impl(int n) { return {std::to_string(n)}; }
};
// The same gate, asking for its values itself.
struct TracedGate : hookset::Slot<int(app::Call), hookset::Pipeline> {
  static constexpr bool trace_values = true;
  static int default_impl(const app::Call& call) { return static_cast<int>(call.args.size()); }
};
// Values of a type without a rendering come out empty (the slot did not ask; an observer did).
struct OpaqueSlot : hookset::Slot<app::Opaque(), hookset::Always> {
  static app::Opaque default_impl() { return {}; }
};
using Set = hookset::HookSet<Gate, Fold, TracedGate, OpaqueSlot>;

struct Recorder : hookset::Observer {
  bool values = false;
  std::vector<std::string> lines;
  bool wants_hook_events() const noexcept override { return true; }
  bool wants_values() const noexcept override { return values; }
  void on_hook_end(const hookset::HookEvent& e) override {
    lines.push_back("hook " + std::string(e.decision) + " input=" + std::string(e.input) +
                    " value=" + std::string(e.value));
  }
  void on_dispatch_result(std::string_view slot, std::uint64_t, std::string_view value,
                          std::string_view input) override {
    lines.push_back("result " + std::string(slot) + " value=" + std::string(value) +
                    " input=" + std::string(input));
  }
};

template <class S>
void add_gate_hooks(Set& set) {
  set.add<S>([](const app::Call& call) -> hookset::decision_t<S> {
    return hookset::rewrite(app::Call{call.args + "a"});
  });
  set.add<S>([](const app::Call&) -> Task<hookset::decision_t<S>> { co_return hookset::pass(); });
}

}  // namespace

TEST_CASE("nobody asked for values: nothing is rendered - observed or not") {
  Set set;
  add_gate_hooks<Gate>(set);
  set.add<Fold>([](int, std::optional<app::Call> last) { return *last; });
  app::formatted = 0;
  hookset::sync_wait(set.call<Gate>(app::Call{"x"}));
  hookset::sync_wait(set.call<Fold>(1));
  Recorder watching;  // hook events, no values
  set.set_observer(&watching);
  hookset::sync_wait(set.call<Gate>(app::Call{"x"}));
  hookset::sync_wait(set.call<Fold>(1));
  CHECK(app::formatted == 0);
  CHECK(watching.lines ==
        std::vector<std::string>{"hook rewrite input= value=", "hook pass input= value=",
                                 "hook  input= value="});  // (the fold hook: no decision)
}

TEST_CASE("an observer that asks gets each hook's input and value - and the result") {
  Set set;
  add_gate_hooks<Gate>(set);
  set.add<Gate>([](const app::Call& call) -> hookset::decision_t<Gate> {
    return hookset::complete(static_cast<int>(call.args.size()) * 100);
  });
  Recorder recorder;
  recorder.values = true;
  set.set_observer(&recorder);
  app::formatted = 0;
  const auto result = hookset::sync_wait(set.call<Gate>(app::Call{"x"}));
  CHECK(result.output() == 200);
  CHECK(recorder.lines == std::vector<std::string>{
                              "hook rewrite input=call<x> value=call<xa>",
                              "hook pass input=call<xa> value=",
                              "hook complete input=call<xa> value=200",
                              "result Gate value=complete(200) input=call<xa>",
                          });
  CHECK(app::formatted == 5);  // 3 inputs, 1 rewrite, the final input

  recorder.lines.clear();
  hookset::sync_wait(set.call<Fold>(7));  // a fold slot's result, rendered
  CHECK(recorder.lines == std::vector<std::string>{"result Fold value=call<7> input="});
  recorder.lines.clear();
  hookset::sync_wait(set.call<OpaqueSlot>());  // no rendering: empty, not an error
  CHECK(recorder.lines == std::vector<std::string>{"result OpaqueSlot value= input="});
}

TEST_CASE("a rejecting pipeline's result, and a failing dispatch reports no result") {
  Set set;
  set.add<Gate>(
      [](const app::Call&) -> hookset::decision_t<Gate> { return hookset::reject("no"); });
  Recorder recorder;
  recorder.values = true;
  set.set_observer(&recorder);
  hookset::sync_wait(set.call<Gate>(app::Call{"y"}));
  CHECK(recorder.lines == std::vector<std::string>{"hook reject input=call<y> value=",
                                                   "result Gate value=reject(no) input=call<y>"});
  recorder.lines.clear();
  set.add<Fold>([](int, std::optional<app::Call>) -> app::Call { throw std::runtime_error("x"); });
  CHECK_THROWS(hookset::sync_wait(set.call<Fold>(1)));
  CHECK(recorder.lines == std::vector<std::string>{"hook  input= value="});
}

TEST_CASE("a slot with trace_values gets values for any observer - and none unobserved") {
  Set set;
  add_gate_hooks<TracedGate>(set);
  app::formatted = 0;
  hookset::sync_wait(set.call<TracedGate>(app::Call{"z"}));
  CHECK(app::formatted == 0);  // nobody watching
  Recorder recorder;           // does not ask for values
  set.set_observer(&recorder);
  hookset::sync_wait(set.call<TracedGate>(app::Call{"z"}));
  CHECK(recorder.lines == std::vector<std::string>{
                              "hook rewrite input=call<z> value=call<za>",
                              "hook pass input=call<za> value=",
                              "result TracedGate value=complete(2) input=call<za>",
                          });
  recorder.lines.clear();
  hookset::sync_wait(set.call<Gate>(app::Call{"z"}));  // the other slot did not ask
  CHECK(recorder.lines.empty());
}

TEST_CASE("TraceWriter writes values only with include_values") {
  Set set;
  add_gate_hooks<Gate>(set);
  std::ostringstream plain_out, values_out;
  {
    hookset::TraceWriter plain(plain_out);
    set.set_observer(&plain);
    app::formatted = 0;
    hookset::sync_wait(set.call<Gate>(app::Call{"q"}));
    CHECK(app::formatted == 0);
  }
  {
    hookset::TraceWriter with_values(values_out);
    with_values.include_values();
    set.set_observer(&with_values);
    hookset::sync_wait(set.call<Gate>(app::Call{"q"}));
  }
  set.set_observer(nullptr);
  const std::string plain = plain_out.str(), traced = values_out.str();
  CHECK(plain.find("\"input\"") == std::string::npos);
  CHECK(plain.find("\"value\"") == std::string::npos);
  CHECK(plain.find("\"decision\":\"rewrite\"") != std::string::npos);
  CHECK(traced.find(R"j("input":"call<q>","value":"call<qa>")j") != std::string::npos);
  CHECK(traced.find(R"j("value":"complete(2)","input":"call<qa>")j") != std::string::npos);
}
