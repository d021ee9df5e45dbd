#pragma once
// An attributing dispatch (`.with_attribution()`, options.hpp): a dispatch of attributing<Kind>,
// whose result says which registration produced it. The rules follow the producer as they go
// (produced_by); what is particular to the result is here: how it is made, and the dispatch of a
// slot with interceptors, which they run.

#include <string>
#include <utility>

#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/hook_id.hpp>

namespace hookset::detail {

template <class Dispatch>  // (a dispatch of attributing<Kind>, which grants its friendship)
class attribution {
  using Kind = typename Dispatch::kind;
  using output = typename Dispatch::output;
  using result_type = typename Dispatch::result_type;

 public:
  // The result, with the registration that produced value_ (the finalizer's input, with
  // Finalize): producer_, held with the snapshot (await_ready); null for the default.
  static result_type resume(Dispatch& self) {
    auto& delegation = self.delegation_;
    if (delegation.started)
      return {delegation.plain.get().await_resume(), delegation.interceptor,
              std::move(delegation.name)};
    if (self.flags_ & Dispatch::driving) get_awaiter(std::move(self.driver_.get())).await_resume();
    output& produced = [&]() -> output& {
      if constexpr (Kind::has_producer) return *self.output_;
      else return *self.value_;
    }();
    if (!self.producer_) return {std::move(produced), HookId{}, std::string()};
    return {std::move(produced), self.producer_->id(), self.producer_->record->name};
  }

  // A slot with interceptors: they run in a dispatch of the plain kind (the one their Next<S>
  // knows), and its result, the outermost interceptor's (it has the last word: docs/semantics.md,
  // section 21), is
  // attributed to that interceptor.
  HOOKSET_NOINLINE static bool start_delegated(Dispatch& self) {
    auto& delegation = self.delegation_;
    const hook_entry& outermost = self.list_->interceptors.front();
    delegation.interceptor = outermost.id();
    delegation.name = outermost.record->name;
    delegation.plain.emplace(converting_dispatch{}, std::move(self));
    delegation.started = true;
    return delegation.plain.get().await_ready();
  }
};

}  // namespace hookset::detail
