// composite: one application assembled from subsystems (skills, memory, tools).
//
// Each subsystem declares its own extension points as a HookSet (skills::Hooks, memory::Hooks,
// tools::Hooks). The application's HookSet nests those sets beside the slots that every
// subsystem plugs into, so one object carries every hook, and every slot, nested or not, is
// dispatched through it:
//
//   Notify     void, Always                 fan-out: every subsystem hears every event
//   CallTool   Fallback + Chain<FirstSuccess> first owner answers: subsystems are asked in turn,
//                                           the first that owns the tool answers, the rest are
//                                           not asked
//   Configure  Always, folded with `last`   each subsystem takes its share of the token budget
//                                           from what the previous ones left
//   ListTools  Always + Aggregate           every subsystem's tools, joined into one list
//
// Subsystems register with add_hooks (one object, one registration per slot it implements);
// third-party plugins arrive as a HookSet of their own and are merged in with extend.
// The program checks its own results and exits non-zero if one is wrong.
#include <hookset/hookset.hpp>

#include <cstddef>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using Names = std::vector<std::string>;
using ToolAnswer = std::optional<std::string>;  // nullopt: "not my tool"

// Aggregate companion: the lists of all outputs, in order, as one list.
struct JoinLists {
  Names operator()(std::vector<Names> lists) const {
    Names all;
    for (Names& list : lists) all.insert(all.end(), list.begin(), list.end());
    return all;
  }
};

// ---- slots every subsystem plugs into --------------------------------------------------------

struct Event {
  std::string_view kind;
};
struct Notify : hookset::Slot<void(const Event&), hookset::Always> {
  static void default_impl(const Event&) {}
};

struct CallTool : hookset::Slot<ToolAnswer(std::string_view tool, std::string_view input),
                                hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  // Runs only when no subsystem owns the tool.
  static ToolAnswer default_impl(std::string_view, std::string_view) { return std::nullopt; }
};

struct Budget {
  std::size_t left = 0;
  std::vector<std::pair<std::string, std::size_t>> reserved;  // who, how many tokens

  std::size_t reserve(std::string who, std::size_t tokens) {
    tokens = tokens < left ? tokens : left;
    left -= tokens;
    reserved.emplace_back(std::move(who), tokens);
    return tokens;
  }
};
struct Configure : hookset::Slot<Budget(std::size_t context_tokens), hookset::Always> {
  static Budget default_impl(std::size_t context_tokens) { return Budget{context_tokens, {}}; }
};

struct ListTools : hookset::Slot<Names(), hookset::Always, hookset::Aggregate<JoinLists>> {
  static Names default_impl() { return {}; }
};

// ---- each subsystem's own extension points ---------------------------------------------------

namespace skills {
// Which skill handles a request: the first skill plugin that recognises it.
struct Match : hookset::Slot<std::optional<std::string>(std::string_view request),
                             hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(std::string_view) { return std::nullopt; }
};
using Hooks = hookset::HookSet<Match>;
}  // namespace skills

namespace memory {
// May this fact be stored? Each filter sees the verdict so far.
struct Admit : hookset::Slot<bool(std::string_view fact), hookset::Always> {
  static bool default_impl(std::string_view fact) { return !fact.empty(); }
};
using Hooks = hookset::HookSet<Admit>;
}  // namespace memory

namespace tools {
// The tool plugins: the first that knows the tool runs it.
struct Run : hookset::Slot<ToolAnswer(std::string_view tool, std::string_view input),
                           hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static ToolAnswer default_impl(std::string_view, std::string_view) { return std::nullopt; }
};
// The tools the plugins provide.
struct Provided : hookset::Slot<Names(), hookset::Always, hookset::Aggregate<JoinLists>> {
  static Names default_impl() { return {}; }
};
using Hooks = hookset::HookSet<Run, Provided>;
}  // namespace tools

// The whole application: its own slots, and each subsystem's set nested inside.
using AppHooks = hookset::HookSet<Notify, CallTool, Configure, ListTools, skills::Hooks,
                                  memory::Hooks, tools::Hooks>;

// ---- the subsystems --------------------------------------------------------------------------

// What the subsystems report, for main() to print and check.
struct Journal {
  Names heard;  // "<subsystem>: <event> ..."
  Names asked;  // subsystems asked about the current tool call, in order
};

class Skills {
 public:
  Skills(const AppHooks& hooks, Journal& journal) : hooks_(hooks), journal_(journal) {}

  void operator()(Notify, const Event& event) const {
    journal_.heard.push_back("skills heard " + std::string(event.kind) + " (skill plugins: " +
                             std::to_string(hooks_.count<skills::Match>()) + ")");
  }
  hookset::Task<ToolAnswer> operator()(CallTool, std::string_view tool,
                                       std::string_view input) const {
    journal_.asked.push_back("skills");
    if (tool != "skill") co_return std::nullopt;
    // A slot of the nested skills set.
    const std::optional<std::string> skill = co_await hooks_.call<skills::Match>(input);
    if (!skill) co_return "no skill for that";
    co_return "the " + *skill + " skill takes it";
  }
  Budget operator()(Configure, std::size_t, std::optional<Budget>&& last) const {
    last->reserve("skills", 1000);  // skill instructions
    return std::move(*last);
  }
  Names operator()(ListTools) const { return {"skill"}; }

 private:
  const AppHooks& hooks_;
  Journal& journal_;
};

class Memory {
 public:
  static constexpr std::size_t tokens_per_fact = 250;

  Memory(const AppHooks& hooks, Journal& journal) : hooks_(hooks), journal_(journal) {}

  // Non-const: registered with std::ref, so the set calls this object as it is.
  void operator()(Notify, const Event& event) {
    const bool end = event.kind == "session.end";
    journal_.heard.push_back("memory heard " + std::string(event.kind) +
                             " (facts: " + std::to_string(facts_.size()) + " of " +
                             std::to_string(capacity_) + (end ? ", now forgotten)" : ")"));
    if (end) facts_.clear();
  }
  hookset::Task<ToolAnswer> operator()(CallTool, std::string_view tool, std::string_view input) {
    journal_.asked.push_back("memory");
    if (tool == "remember") {
      if (!co_await hooks_.call<memory::Admit>(input)) co_return "refused by a memory filter";
      if (facts_.size() == capacity_) co_return "memory is full";
      facts_.emplace_back(input);
      const std::string count = std::to_string(facts_.size()) + " of " + std::to_string(capacity_);
      co_return "stored (" + count + ")";
    }
    if (tool == "recall") {
      for (const std::string& fact : facts_)
        if (fact.find(input) != std::string::npos) co_return fact;
      co_return "nothing about that";
    }
    co_return std::nullopt;
  }
  // Takes a quarter of what is left, and sizes itself to it.
  Budget operator()(Configure, std::size_t, std::optional<Budget>&& last) {
    capacity_ = last->reserve("memory", last->left / 4) / tokens_per_fact;
    return std::move(*last);
  }
  Names operator()(ListTools) const { return {"remember", "recall"}; }

 private:
  const AppHooks& hooks_;
  Journal& journal_;
  Names facts_;
  std::size_t capacity_ = 0;
};

class Tools {
 public:
  Tools(const AppHooks& hooks, Journal& journal) : hooks_(hooks), journal_(journal) {}

  void operator()(Notify, const Event& event) const {
    journal_.heard.push_back("tools heard " + std::string(event.kind) +
                             " (tool plugins: " + std::to_string(hooks_.count<tools::Run>()) + ")");
  }
  // The tools subsystem owns whatever its plugins run.
  hookset::Task<ToolAnswer> operator()(CallTool, std::string_view tool,
                                       std::string_view input) const {
    journal_.asked.push_back("tools");
    co_return co_await hooks_.call<tools::Run>(tool, input);
  }
  Budget operator()(Configure, std::size_t, std::optional<Budget>&& last) const {
    last->reserve("tools", 500);  // tool descriptions
    return std::move(*last);
  }
  hookset::Task<Names> operator()(ListTools) const {
    co_return co_await hooks_.call<tools::Provided>();
  }

 private:
  const AppHooks& hooks_;
  Journal& journal_;
};

struct Application {
  Journal journal;
  AppHooks hooks;
  Skills skills{hooks, journal};
  Memory memory{hooks, journal};
  Tools tools{hooks, journal};

  Application() {
    // Borrowed (std::ref): the subsystems live beside the set.
    // Registration order is dispatch order.
    hooks.add_hooks(std::ref(skills));
    hooks.add_hooks(std::ref(memory));
    hooks.add_hooks(std::ref(tools));
  }
  Application(const Application&) = delete;
  Application& operator=(const Application&) = delete;
};

// ---- third-party plugins, packaged as a set of their own ------------------------------------

struct Calculator {
  ToolAnswer operator()(tools::Run, std::string_view tool, std::string_view input) const {
    if (tool != "add") return std::nullopt;
    const std::size_t plus = input.find('+');
    if (plus == std::string_view::npos) return "usage: add a+b";
    return std::to_string(std::stoi(std::string(input.substr(0, plus))) +
                          std::stoi(std::string(input.substr(plus + 1))));
  }
  Names operator()(tools::Provided) const { return {"add"}; }
};

AppHooks plugins() {
  auto keyword_skill = [](std::string keyword) {
    return [keyword](std::string_view request) -> std::optional<std::string> {
      if (request.find(keyword) == std::string_view::npos) return std::nullopt;
      return keyword;
    };
  };
  return AppHooks{}
      .with<skills::Match>(keyword_skill("summarize"))
      .with<skills::Match>(keyword_skill("translate"))
      .with<memory::Admit>([](std::string_view fact, std::optional<bool> last) {
        return *last && fact.find("password") == std::string_view::npos;  // never store secrets
      })
      .with_hooks(Calculator{});  // both tools::Run and tools::Provided
}

std::string join(const Names& names, std::string_view separator = ", ") {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : std::string(separator)) + name;
  return text;
}

int failures = 0;
void check(bool ok, const std::string& what) {
  if (ok) return;
  std::cerr << "composite: WRONG: " << what << '\n';
  ++failures;
}

}  // namespace

int main() {
  Application app;
  app.hooks.extend(plugins());

  std::cout << "== configure: each subsystem takes its share of a 4000-token context\n";
  const Budget budget = hookset::sync_wait(app.hooks.call<Configure>(4000));
  for (const auto& [who, tokens] : budget.reserved)
    std::cout << who << " reserves " << tokens << '\n';
  std::cout << "left for the conversation: " << budget.left << '\n';
  check(budget.left == 1750 && budget.reserved.size() == 3,
        "budget folded through all three subsystems");

  std::cout << "== event session.start, heard by every subsystem\n";
  hookset::sync_wait(app.hooks.call<Notify>(Event{"session.start"}));
  for (const std::string& line : app.journal.heard) std::cout << line << '\n';
  check(app.journal.heard == Names{"skills heard session.start (skill plugins: 2)",
                                   "memory heard session.start (facts: 0 of 3)",
                                   "tools heard session.start (tool plugins: 1)"},
        "session.start reached every subsystem in order");

  const Names tool_names = hookset::sync_wait(app.hooks.call<ListTools>());
  std::cout << "== tools: " << join(tool_names) << '\n';
  check(tool_names == Names{"skill", "remember", "recall", "add"},
        "tool list aggregated from all subsystems");

  struct ToolCall {
    std::string_view tool, input, answer, asked;
  };
  const ToolCall calls[] = {
      {"skill", "summarize this article", "the summarize skill takes it", "skills"},
      {"remember", "the user's name is Ada", "stored (1 of 3)", "skills, memory"},
      {"remember", "the password is hunter2", "refused by a memory filter", "skills, memory"},
      {"recall", "name", "the user's name is Ada", "skills, memory"},
      {"add", "2+40", "42", "skills, memory, tools"},
      {"teleport", "mars", "(no subsystem owns this tool)", "skills, memory, tools"},
  };
  for (const ToolCall& call : calls) {
    app.journal.asked.clear();
    const ToolAnswer answer = hookset::sync_wait(app.hooks.call<CallTool>(call.tool, call.input));
    const std::string shown = answer.value_or("(no subsystem owns this tool)");
    std::cout << call.tool << " \"" << call.input << "\" -> " << shown << "  [asked "
              << join(app.journal.asked) << "]\n";
    check(shown == call.answer, std::string(call.tool) + " answered \"" + shown + '"');
    check(join(app.journal.asked) == call.asked,
          std::string(call.tool) + " asked " + join(app.journal.asked));
  }

  std::cout << "== event session.end\n";
  app.journal.heard.clear();
  hookset::sync_wait(app.hooks.call<Notify>(Event{"session.end"}));
  for (const std::string& line : app.journal.heard) std::cout << line << '\n';
  check(app.journal.heard.size() == 3 &&
            app.journal.heard[1] == "memory heard session.end (facts: 1 of 3, now forgotten)",
        "session.end reached every subsystem");

  if (failures != 0) std::cerr << "composite: " << failures << " wrong result(s)\n";
  return failures == 0 ? 0 : 1;
}
