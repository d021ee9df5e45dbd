#pragma once
// The rules of a Pipeline slot (<hookset/pipeline.hpp>), where they differ from the others': a
// hook's output is a decision - pass the input on, rewritten or not, or end the dispatch with a
// terminal outcome - and the default ends the pipeline on the input as finally rewritten. The
// dispatch's take_output, finish and default call them for a pipeline kind only.

#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include <hookset/coro/task.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/pipeline.hpp>

namespace hookset::detail {

template <class Dispatch>  // (the dispatch of a pipeline kind, which grants its friendship)
class pipeline_rules {
  using Kind = typename Dispatch::kind;
  using output = typename Dispatch::output;

 public:
  // A hook's decision (in value_): pass the input on, rewritten or not, or end the dispatch
  // with it. Observers see it, with the hook's end.
  static progress take_decision(Dispatch& self) {
    auto& decision = self.value_->variant();
    const hook_entry& hook = self.hooks_[self.next_ - 1];
    auto& input = std::get<0>(self.args_);
    const bool rewritten = decision.index() == 1;
    if (self.hook_events())
      self.observers_.hook_decision(self.slot_->name, hook, self.hook_position_, self.hook_started_,
                                    decision, rewritten, input);
    if (decision.index() == 0) return progress::more;
    if (rewritten) {
      input = std::move(std::get_if<1>(&decision)->input);
      return progress::more;
    }
    self.output_.emplace(std::visit(
        [&](auto& terminal) -> output {
          using T = std::remove_cvref_t<decltype(terminal)>;
          if constexpr (std::is_same_v<T, Pass> || is_rewrite<T>)
            throw std::logic_error("unreachable");  // (handled above)
          else return output{std::move(terminal), std::move(input), hook.id()};
        },
        decision));
    return progress::stop;  // (rules::finish_stopped: the result is made)
  }

  // The hooks are done, none of them decided (or there were none).
  HOOKSET_ALWAYS_INLINE static bool finish(Dispatch& self) {
    if constexpr (Kind::default_decides) {
      // Hooks decided, and all passed: run normally, on the final input. (As for Fallback
      // slots, hooks that all failed open leave the decision to the default.)
      if (self.produced_ != 0) {
        self.output_.emplace(output{Pass{}, std::move(std::get<0>(self.args_)), HookId{}});
        return true;
      }
    }
    // No hook decided (Fallback), or every hook passed: the default, on the final input.
    return Dispatch::rules::call_default(self, &Dispatch::rules::complete);
  }

  // What the default produced, as the dispatch's result: an output completes the pipeline; a
  // deciding default's decision ends it as it is, a pass or rewrite as Pass ("run normally") on
  // the input, rewritten or not.
  template <class Produced>  // (Kind::default_result: a template, as it is void for some kinds)
  static output default_outcome(Dispatch& self, Produced&& produced) {
    auto& input = std::get<0>(self.args_);
    if constexpr (!Kind::default_decides) {
      return output{Complete<typename Kind::default_result>{std::forward<Produced>(produced)},
                    std::move(input), HookId{}};
    } else {
      return std::visit(
          [&](auto& decided) -> output {
            using T = std::remove_cvref_t<decltype(decided)>;
            if constexpr (std::is_same_v<T, Pass>) return output{Pass{}, std::move(input), {}};
            else if constexpr (is_rewrite<T>) return output{Pass{}, std::move(decided.input), {}};
            else return output{std::move(decided), std::move(input), {}};
          },
          produced.variant());
    }
  }
  // An asynchronous default.
  static Task<output> complete(Task<typename Kind::default_result> default_output, Dispatch& self) {
    co_return default_outcome(self, co_await std::move(default_output));
  }
};

}  // namespace hookset::detail
