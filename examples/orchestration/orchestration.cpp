// orchestration: an LLM-style request loop written by the application, with hooks at its
// decision points. hookset never owns the loop: handle_request() below is ordinary application
// code that dispatches a slot wherever a policy may want a say, and decides itself what to do
// with the answer.
//
//   RequestId       Singleton, a Stateful hook      numbers the requests of every tenant
//   ValidatePrompt  Always + Chain<ShortCircuit>    gates: the first rejection stops the request
//   ChooseModel     Fallback + Chain<FirstSuccess>  the first policy that cares picks the model,
//                                                   else the (asynchronous) default does
//   SystemPrompt    Singleton                       one persona per tenant
//   GateToolCall    Pipeline + Terminals<Abort>     gates pass the tool call on (a normaliser
//                                                   rewrites it), reject it (the model is told
//                                                   why) or abort the request; when every gate
//                                                   passes, the default runs the tool
//   AuditOutput     Always (fold) + Finalize        each auditor redacts what the previous left,
//                                                   then the tenant's length limit applies
//
// Every tenant gets its own set: the company-wide base set extended with the tenant's policy
// bundle, one object implementing several slots (add_hooks). The model is faked
// deterministically. The program checks its own results and exits non-zero if one is wrong.
#include <hookset/hookset.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

struct Request {
  std::string tenant;
  std::string prompt;
};

// A gate's verdict. ShortCircuit needs only has_value(), so this stands in for C++23's
// std::expected<void, std::string>.
struct Verdict {
  std::optional<std::string> rejection;
  bool has_value() const noexcept { return !rejection; }

  static Verdict accept() { return {}; }
  static Verdict reject(std::string why) { return {std::move(why)}; }
};

struct ToolCall {
  std::string tool;
  std::string argument;
};
std::string show(const ToolCall& call) { return call.tool + "(\"" + call.argument + "\")"; }

struct ToolResult {
  std::string tool;
  std::string content;
  bool denied = false;
};

// What a tool gate may decide besides pass, rewrite and reject: stop the whole request. (The
// loop turns each decision into running the tool, telling the model, or stopping: a gate can
// do no more than decide.)
struct Abort {
  std::string reason;
};

ToolResult run_tool(const ToolCall& call) {
  if (call.tool == "weather") return {call.tool, "18C and light rain in " + call.argument};
  return {call.tool, "done"};
}

// Applied after every auditor. Configured per set (configure<AuditOutput>), so tenants differ.
struct Truncate {
  std::size_t max_chars = 200;
  std::string operator()(std::string text) const {
    if (text.size() <= max_chars) return text;
    const std::size_t cut = text.rfind(' ', max_chars);  // whole words only
    text.resize(cut == std::string::npos ? max_chars : cut);
    return text + "...";
  }
};

// ---- the slots: the loop's decision points --------------------------------------------------

struct RequestId : hookset::Slot<std::uint64_t(std::string_view tenant), hookset::Singleton> {
  static std::uint64_t default_impl(std::string_view) { return 0; }  // 0: nobody numbers requests
};
struct ValidatePrompt : hookset::Slot<Verdict(const Request&), hookset::Always,
                                      hookset::Chain<hookset::ShortCircuit>> {
  static Verdict default_impl(const Request& request) {
    return request.prompt.empty() ? Verdict::reject("prompt must not be empty") : Verdict::accept();
  }
};
struct ChooseModel : hookset::Slot<std::optional<std::string>(const Request&), hookset::Fallback,
                                   hookset::Chain<hookset::FirstSuccess>> {
  // A coroutine, so that a real default could co_await a routing service here.
  static hookset::Task<std::optional<std::string>> default_impl(const Request&) {
    co_return "general-small";
  }
};
struct SystemPrompt : hookset::Slot<std::string(), hookset::Singleton> {
  static std::string default_impl() { return "You are an assistant."; }
};
struct GateToolCall
    : hookset::Slot<ToolResult(ToolCall), hookset::Pipeline, hookset::Terminals<Abort>> {
  static ToolResult default_impl(const ToolCall& call) { return run_tool(call); }
};
struct AuditOutput : hookset::Slot<std::string(std::string_view model_output), hookset::Always,
                                   hookset::Finalize<Truncate>> {
  static std::string default_impl(std::string_view model_output) {
    return std::string(model_output);
  }
};

using AppHooks = hookset::HookSet<RequestId, ValidatePrompt, ChooseModel, SystemPrompt,
                                  GateToolCall, AuditOutput>;

// ---- company-wide policy: the base set every tenant starts from ------------------------------

// Replaces each word for which `secret` holds, keeping its trailing punctuation.
std::string redact_words(std::string_view text, bool (*secret)(std::string_view),
                         std::string_view replacement) {
  std::string out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    const std::string_view word = text.substr(start, end - start);
    const std::size_t core = word.find_last_not_of(".,;:!?") + 1;  // npos + 1 == 0
    out.append(secret(word.substr(0, core)) ? replacement : word.substr(0, core))
        .append(word.substr(core));
    if (end < text.size()) out += ' ';
    start = end + 1;
  }
  return out;
}

// Mutable state, hence Stateful: concurrent requests would take turns on it.
struct RequestCounter {
  std::uint64_t last_id = 0;
  std::map<std::string, int> per_tenant;
  std::uint64_t operator()(std::string_view tenant) {
    ++per_tenant[std::string(tenant)];
    return ++last_id;
  }
};

AppHooks base_hooks(const hookset::Stateful<RequestCounter>& counter) {
  AppHooks base;
  // Copies of a Stateful share its state, and copies of a set share its hooks: every tenant set
  // built from this one draws from the same counter, so ids are unique across tenants.
  base.add<RequestId>(counter);
  base.add<ValidatePrompt>([](const Request& request) {
    if (contains(request.prompt, "sk-"))
      return Verdict::reject("prompt looks like it contains an API key");
    return Verdict::accept();
  });
  base.add<SystemPrompt>([] { return std::string("You are a helpful assistant."); });
  // Gates, in order: normalise the arguments (a rewrite every later gate sees), then the
  // tenant's checks (their bundles), then the company's last word on destructive commands.
  base.add<GateToolCall>(
      [](const ToolCall& call) -> hookset::decision_t<GateToolCall> {
        const auto first = call.argument.find_first_not_of(' ');
        const auto last = call.argument.find_last_not_of(' ');
        if (first == 0 && last + 1 == call.argument.size()) return hookset::pass();
        if (first == std::string::npos) return hookset::rewrite(ToolCall{call.tool, ""});
        return hookset::rewrite(ToolCall{call.tool, call.argument.substr(first, last - first + 1)});
      },
      {.name = "normalise", .priority = hookset::Priority{-10}});
  base.add<GateToolCall>(
      [](const ToolCall& call) -> hookset::decision_t<GateToolCall> {
        if (call.tool == "shell" && contains(call.argument, "rm -rf"))
          return Abort{"destructive shell command"};
        return hookset::pass();
      },
      {.name = "no-destruction", .priority = hookset::Priority{10}});
  // An auditor gets the text as the previous auditors left it (`last`; always set in an Always
  // slot, the default ran first) and returns its own version.
  base.add<AuditOutput>([](std::string_view, const std::optional<std::string>& last) {
    const auto is_email = [](std::string_view word) { return contains(word, "@"); };
    return redact_words(*last, is_email, "[email]");
  });
  base.configure<AuditOutput>(Truncate{200});
  return base;
}

// ---- per-tenant policy bundles: one object, several slots ------------------------------------

// acme runs a support desk: its fine-tuned model for everything, and no web search.
struct AcmePolicy {
  std::string operator()(SystemPrompt) const { return "You are Acme's support assistant."; }
  std::optional<std::string> operator()(ChooseModel, const Request&) const {
    return "acme-support-7b";
  }
  hookset::decision_t<GateToolCall> operator()(GateToolCall, const ToolCall& call) const {
    if (call.tool == "search") return hookset::reject("web search is disabled for acme");
    return hookset::pass();
  }
};

// globex does research: a large model for summaries only, and "confidential" never leaves.
struct GlobexPolicy {
  std::string operator()(SystemPrompt) const { return "You are Globex's research analyst."; }
  std::optional<std::string> operator()(ChooseModel, const Request& request) const {
    if (contains(request.prompt, "Summarize")) return "large-128k";
    return std::nullopt;  // not our call: the default decides
  }
  std::string operator()(AuditOutput, std::string_view,
                         const std::optional<std::string>& last) const {
    const auto is_confidential = [](std::string_view word) { return word == "confidential"; };
    return redact_words(*last, is_confidential, "[redacted]");
  }
};

// ---- the application's loop, and a deterministic stand-in for the model ----------------------

struct ModelReply {
  std::optional<ToolCall> tool_call;  // either a tool call, or the final text
  std::string text;
};

ModelReply fake_model(std::string_view prompt, const std::vector<ToolResult>& results) {
  if (!results.empty()) {
    const ToolResult& result = results.back();
    if (result.denied) return {std::nullopt, "Sorry, " + result.content + "."};
    return {std::nullopt,
            "The " + result.tool + " tool says " + result.content + ": take an umbrella."};
  }
  if (contains(prompt, "weather"))
    return {ToolCall{"weather", "  Paris "}, {}};  // (the normaliser trims)
  if (contains(prompt, "Search")) return {ToolCall{"search", "hookset releases"}, {}};
  if (contains(prompt, "disk")) return {ToolCall{"shell", "rm -rf /var/cache"}, {}};
  if (contains(prompt, "Summarize"))
    return {std::nullopt,
            "Q3: revenue up 12%; the confidential merger is on track; ask bob@globex.com."};
  return {std::nullopt, "Hello!"};
}

enum class Status { Answered, Rejected, Aborted };

struct Outcome {
  std::uint64_t id = 0;
  Status status = Status::Answered;
  std::string model;  // empty when rejected before a model was chosen
  std::string text;   // the answer the user gets, or why the request stopped
};

// The request takes its arguments by value: a coroutine may outlive its caller's temporaries.
hookset::Task<Outcome> handle_request(const AppHooks& hooks, Request request) {
  Outcome outcome;
  outcome.id = co_await hooks.call<RequestId>(request.tenant);
  std::cout << "== request " << outcome.id << " (" << request.tenant << "): \"" << request.prompt
            << "\"\n";

  if (const Verdict verdict = co_await hooks.call<ValidatePrompt>(request); !verdict.has_value()) {
    std::cout << "  rejected: " << *verdict.rejection << '\n';
    outcome.status = Status::Rejected;
    outcome.text = *verdict.rejection;
    co_return outcome;
  }
  outcome.model = *co_await hooks.call<ChooseModel>(request);       // the default always answers
  const std::string persona = co_await hooks.call<SystemPrompt>();  // a real model would get it
  std::cout << "  model " << outcome.model << ", persona \"" << persona << "\"\n";

  std::vector<ToolResult> results;
  for (int turn = 0; turn < 4; ++turn) {
    const ModelReply reply = fake_model(request.prompt, results);
    if (!reply.tool_call) {
      outcome.text = co_await hooks.call<AuditOutput>(reply.text);
      std::cout << "  model says: " << reply.text << "\n  user gets:  " << outcome.text << '\n';
      co_return outcome;
    }
    const auto gate = co_await hooks.call<GateToolCall>(*reply.tool_call);
    const ToolCall& call = gate.input;  // as the gates left it
    if (gate.completed()) {             // every gate passed: the default ran the tool
      results.push_back(gate.output());
      std::cout << "  tool " << show(call) << " ran: " << results.back().content << '\n';
    } else if (gate.rejected()) {  // the model learns why, and may answer without the tool
      results.push_back({call.tool, gate.reason(), true});
      std::cout << "  tool " << show(call) << " denied: " << gate.reason() << '\n';
    } else {
      const std::string& reason = gate.get<Abort>().reason;
      std::cout << "  tool " << show(call) << " aborted the request: " << reason << '\n';
      outcome.status = Status::Aborted;
      outcome.text = reason;
      co_return outcome;
    }
  }
  outcome.status = Status::Aborted;
  outcome.text = "too many turns";
  co_return outcome;
}

// Prints hookset's warnings into the trace, so that expected_output.txt pins them down.
struct TraceWarnings : hookset::Observer {
  int count = 0;
  void on_warning(std::string_view slot, std::string_view message) override {
    ++count;
    std::cout << "  hookset warning [" << slot << "]: " << message << '\n';
  }
};

int failures = 0;
void check(bool ok, const std::string& what) {
  if (ok) return;
  std::cerr << "orchestration: WRONG: " << what << '\n';
  ++failures;
}

}  // namespace

int main() {
  TraceWarnings warnings;
  const hookset::ScopedObserver observing(&warnings);

  const hookset::Stateful counter{RequestCounter{}};
  const AppHooks base = base_hooks(counter);

  // A tenant set is a copy of the base set extended with the tenant's bundle. The bundles replace
  // the base persona (a Singleton) and acme's replaces the base length limit (a configured
  // companion): the observer reports each replacement, so an accidental one cannot go unseen.
  std::cout << "== tenant acme: base set + AcmePolicy, answers cut at 60 characters\n";
  AppHooks acme_bundle;
  acme_bundle.add_hooks(AcmePolicy{});
  acme_bundle.configure<AuditOutput>(Truncate{60});
  const AppHooks acme = AppHooks(base).with_extended(acme_bundle);
  std::cout << "== tenant globex: base set + GlobexPolicy\n";
  const AppHooks globex = AppHooks(base).with_extended(AppHooks{}.with_hooks(GlobexPolicy{}));
  check(warnings.count == 3, "three replacements reported, got " + std::to_string(warnings.count));
  check(base.count<AuditOutput>() == 1 && globex.count<AuditOutput>() == 2,
        "extend adds to the copy and leaves the base set unchanged");

  struct Case {
    std::string_view tenant, prompt;
    Status status;
    std::string_view model, text;
  };
  const Case cases[] = {
      {"acme", "What is the weather in Paris?", Status::Answered, "acme-support-7b",
       "The weather tool says 18C and light rain in Paris: take an..."},
      {"globex", "Summarize the Q3 report", Status::Answered, "large-128k",
       "Q3: revenue up 12%; the [redacted] merger is on track; ask [email]."},
      {"acme", "Debug this: my key is sk-live-42", Status::Rejected, "",
       "prompt looks like it contains an API key"},
      {"acme", "Search the web for hookset releases", Status::Answered, "acme-support-7b",
       "Sorry, web search is disabled for acme."},
      {"globex", "Free up some disk space", Status::Aborted, "general-small",
       "destructive shell command"},
      {"globex", "", Status::Rejected, "", "prompt must not be empty"},
  };
  std::uint64_t expected_id = 0;
  for (const Case& c : cases) {
    const AppHooks& hooks = c.tenant == "acme" ? acme : globex;
    const Outcome outcome = hookset::sync_wait(
        handle_request(hooks, Request{std::string(c.tenant), std::string(c.prompt)}));
    const std::string which = "request \"" + std::string(c.prompt) + "\": ";
    check(outcome.id == ++expected_id, which + "id " + std::to_string(outcome.id));
    check(outcome.status == c.status, which + "wrong status");
    check(outcome.model == c.model, which + "model " + outcome.model);
    check(outcome.text == c.text, which + "text \"" + outcome.text + '"');
  }

  // with_lock reads the hook's state in turn with its calls.
  const auto per_tenant =
      hookset::sync_wait(counter.with_lock([](RequestCounter& c) { return c.per_tenant; }));
  std::cout << "== requests per tenant:";
  for (const auto& [tenant, requests] : per_tenant) std::cout << ' ' << tenant << '=' << requests;
  std::cout << '\n';
  check(per_tenant == std::map<std::string, int>{{"acme", 3}, {"globex", 3}},
        "one counter for both tenants");

  if (failures != 0) std::cerr << "orchestration: " << failures << " wrong result(s)\n";
  return failures == 0 ? 0 : 1;
}
