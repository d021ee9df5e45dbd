// add_hooks / with_hooks: one object implementing several slots.
#include "hookset_catch.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

namespace {
using Log = std::vector<std::string>;

struct ValidatePrompt
    : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Always> {
  static std::optional<std::string> default_impl(std::string_view) { return std::nullopt; }
};
struct ChooseModel : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Fallback,
                                   hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(std::string_view) { return "small"; }
};
struct CostCenter : hookset::Slot<std::string(), hookset::Singleton> {
  static std::string default_impl() { return "default"; }
};
struct Audit : hookset::Slot<void(Log&), hookset::Always> {
  static void default_impl(Log&) {}
};
using Set = hookset::HookSet<ValidatePrompt, CostCenter, hookset::HookSet<ChooseModel, Audit>>;

// Implements ValidatePrompt and ChooseModel (nested), not CostCenter or Audit.
struct Policy {
  std::string prefix;
  int* copies = nullptr;
  Policy(std::string p, int* c) : prefix(std::move(p)), copies(c) {}
  Policy(const Policy& other) : prefix(other.prefix), copies(other.copies) { ++*copies; }
  Policy(Policy&&) = default;

  std::optional<std::string> operator()(ValidatePrompt, std::string_view prompt,
                                        std::optional<std::optional<std::string>> last) const {
    if (*last) return *last;
    if (prompt.find("sk-") != std::string_view::npos) return prefix + ": key";
    return std::nullopt;
  }
  hookset::Task<std::optional<std::string>> operator()(ChooseModel, std::string_view task) const {
    co_return prefix + ":" + std::string(task);
  }
};
}  // namespace

TEST_CASE("add_hooks registers exactly the slots the object implements, nested ones included") {
  int copies = 0;
  Set set;
  const std::vector<hookset::HookId> ids = set.add_hooks(Policy{"tenant-a", &copies});
  REQUIRE(ids.size() == 2);
  REQUIRE(copies == 0);  // moved in, stored once
  REQUIRE(set.count<ValidatePrompt>() == 1);
  REQUIRE(set.count<ChooseModel>() == 1);
  REQUIRE(set.count<CostCenter>() == 0);
  REQUIRE(set.count<Audit>() == 0);
  REQUIRE(hookset::sync_wait(set.call<ValidatePrompt>("sk-1")) == "tenant-a: key");
  REQUIRE(hookset::sync_wait(set.call<ValidatePrompt>("fine")) == std::nullopt);
  REQUIRE(hookset::sync_wait(set.call<ChooseModel>("task")) == "tenant-a:task");
  REQUIRE(hookset::sync_wait(set.call<CostCenter>()) == "default");
}

TEST_CASE("the adapters share one stored object, which lives until the last adapter goes") {
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  struct Holder {
    std::shared_ptr<int> keep;
    std::string operator()(CostCenter) const { return "held"; }
    void operator()(Audit, Log& log) const { log.push_back("audit"); }
  };
  Set set;
  const auto ids = set.add_hooks(Holder{alive});
  alive.reset();
  REQUIRE(watch.use_count() == 1);  // one stored object for both adapters
  REQUIRE(set.remove(ids[0]));
  REQUIRE_FALSE(watch.expired());
  Log log;
  hookset::sync_wait(set.call<Audit>(log));
  REQUIRE(log == Log{"audit"});
  REQUIRE(set.remove(ids[1]));
  REQUIRE(watch.expired());
}

TEST_CASE("add_hooks borrows with std::ref and shares a std::shared_ptr") {
  struct Counter {
    int audits = 0;
    void operator()(Audit, Log&) { ++audits; }  // non-const: fine when borrowed or shared
  };
  Counter borrowed;
  auto shared = std::make_shared<Counter>();
  Set set;
  set.add_hooks(std::ref(borrowed));
  set.add_hooks(shared);
  Log log;
  hookset::sync_wait(set.call<Audit>(log));
  REQUIRE(borrowed.audits == 1);
  REQUIRE(shared->audits == 1);
}

namespace {
// Takes any slot in any shape (the trailing `last` of fold slots included) and records it.
struct CatchAll {
  Log* log;
  template <class Slot, class... Rest>
  typename Slot::result_type operator()(Slot, const Rest&...) const {
    log->push_back(std::string(hookset::slot_name<Slot>));
    return typename Slot::result_type();
  }
};
}  // namespace

TEST_CASE("a generic catch-all call operator matches every slot") {
  Log log;
  Set set;
  REQUIRE(set.add_hooks(CatchAll{&log}).size() == 4);
  Log audit_log;
  REQUIRE(hookset::sync_wait(set.call<ValidatePrompt>("x")) == std::nullopt);
  REQUIRE(hookset::sync_wait(set.call<ChooseModel>("x")) == "small");  // hook said nothing
  REQUIRE(hookset::sync_wait(set.call<CostCenter>()).empty());         // hook replaced default
  hookset::sync_wait(set.call<Audit>(audit_log));
  REQUIRE(log == Log{"ValidatePrompt", "ChooseModel", "CostCenter", "Audit"});  // call order
}

TEST_CASE("with_hooks builds in one expression and ids remove single adapters") {
  int copies = 0;
  const Policy policy{"p", &copies};
  Set set = Set{}.with_hooks(policy);
  REQUIRE(copies == 1);  // an lvalue is copied once
  REQUIRE(set.count<ValidatePrompt>() == 1);
  REQUIRE(set.count<ChooseModel>() == 1);
}
