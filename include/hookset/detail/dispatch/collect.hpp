#pragma once
// How an aggregate's outputs are collected (dispatch_rules' base, rules.hpp): the list the
// aggregate receives, made with room for every output, and each output put in it - a plain
// hook's made in place (collect_plain), the others' moved there (collect), with the producer
// when the aggregate takes attributed outputs.

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/attributed.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/dispatch/frame.hpp>
#include <hookset/detail/hook_list.hpp>

namespace hookset::detail {

template <class Dispatch>  // (the dispatch grants it its friendship)
class aggregate_collection {
  using Kind = typename Dispatch::kind;
  using result = typename Dispatch::result;
  using entry = hook_entry;
  static constexpr bool attributed = Dispatch::attributed;

 public:
  // The vector the aggregate receives, with room for every output (the default's and each
  // hook's). Made new, then swapped in: reserve() on the dispatch's own vector had the move of
  // its elements (for a verdict 0.5 KB of code) - the allocation may have changed it, for all the
  // optimiser knows. The dispatch's own is empty - a dispatch starts once (an interceptor's
  // next() starts a dispatch of its own) - so the one it gets back has none to destroy.
  // A presized list is made with its elements, empty (next_element).
  HOOKSET_ALWAYS_INLINE static void reserve_outputs(Dispatch& self) {
    const bool nothing_collected = self.outputs_.begin() == self.outputs_.end();
    HOOKSET_ASSUME(nothing_collected);
    if constexpr (presized) {
      std::vector<Attributed<result>> made(self.count_ + 1);
      self.outputs_.swap(made);
    } else {
      std::vector<typename Dispatch::collected> reserved;
      reserved.reserve(self.count_ + 1);
      self.outputs_.swap(reserved);
    }
  }
  // The list of a dispatch without hooks, for its default's output (start_without_hooks,
  // after_sole_default).
  HOOKSET_NOINLINE static void make_list_for_default(Dispatch& self) {
    if constexpr (presized) {
      std::vector<Attributed<result>> made(1);
      const bool nothing_collected = self.outputs_.begin() == self.outputs_.end();
      HOOKSET_ASSUME(nothing_collected);
      self.outputs_.swap(made);
    }
  }
  // Moves the newest output into the aggregate's list (attributed: with its producer);
  // nothing for other slots.
  // A plain hook's output is collected in place (collect_plain): what comes here is a
  // bookkept or driven hook's, or an asynchronous default's. Where the output owns memory, the
  // one out-of-line copy that collects the default's in place too (collect_output: for a
  // verdict, 0.7 KB less at each place), else inline.
  HOOKSET_ALWAYS_INLINE static void collect(Dispatch& self) {
    if constexpr (collects_output_outlined) collect_output(self, std::move(*self.value_));
    else collect_here(self);
  }
  static constexpr bool collects_output_outlined =
      attributed && std::is_default_constructible_v<result> &&
      std::is_nothrow_move_assignable_v<result> && !std::is_trivially_copyable_v<result>;
  // An output - value_'s, or the default's made in the caller - into a new element, with its
  // producer_ (null: the default), told to the output watch. (A template: a void slot has no
  // output; Output is always result.)
  template <class Output>
  HOOKSET_NOINLINE static void collect_output(Dispatch& self, Output&& output) {
    collect_attributed(self, output);
  }
  template <class Output>
  HOOKSET_ALWAYS_INLINE static void collect_attributed(Dispatch& self, Output& output) {
    if (output_watch<result>* watch = watched(self)) [[unlikely]]
      watch->seen(self.producer_, &output);
    if constexpr (std::is_default_constructible_v<result> &&
                  std::is_nothrow_move_assignable_v<result>)
      fill_collected(next_element(self), output, self.producer_);
    else self.outputs_.emplace_back(attribute{output, self.producer_});
  }
  HOOKSET_ALWAYS_INLINE static void collect_here(Dispatch& self) {
    if constexpr (attributed) {
      collect_attributed(self, *self.value_);
    } else if constexpr (Kind::has_aggregate) {
      self.outputs_.push_back(std::move(*self.value_));
    }
  }
  // Fills an aggregate's element made empty in place with `output` (moved from) and, attributed,
  // its producer (null: the default). No Attributed is moved: a conversion to one is, by Clang,
  // and costs each element twice its construction.
  // (A template: a void slot has no element type to name.)
  template <class Element, class Output>
  HOOKSET_ALWAYS_INLINE static void fill_collected(Element& element, Output& output,
                                                   const entry* producer) {
    if constexpr (attributed) {
      element.value = std::move(output);
      if (producer) name_producer(element, *producer);
    } else {
      element = std::move(output);
    }
  }
  // An attributed element's registration: its id and its name, if any (copy_producer_name).
  template <class Element>
  HOOKSET_ALWAYS_INLINE static void name_producer(Element& element, const entry& producer) {
    element.hook = producer.id();
    if (!producer.record->name.empty()) copy_producer_name(element.name, producer);
  }
  // An aggregate whose outputs nothing judges first (no chain companion): a plain hook's output
  // is made in the aggregate's list, not in value_ and then moved there - one move of the output
  // less per hook (a verdict, with its strings and its failure, is costly to move).
  static constexpr bool collects_in_place =
      Kind::has_aggregate && !Kind::has_chain &&
      (!attributed ||
       (std::is_default_constructible_v<result> && std::is_nothrow_move_assignable_v<result>));
  // An Always slot's default whose output is attributed is collected in place too (start()):
  // one move of a verdict less, and its code.
  static constexpr bool collects_default_in_place =
      Kind::is_always && collects_in_place && attributed;
  // collect() of a plain hook's call, in a dispatch with no context (no output watch).
  HOOKSET_ALWAYS_INLINE static void collect_plain(Dispatch& self, const entry& hook) {
    const auto sync = sync_call_of<Kind>(hook);
    if constexpr (attributed) {
      // (producer_ is not followed here: the element names its hook, and the loop sets
      // producer_ once, after the stretch, where the result is attributed.)
      Attributed<result>& element = next_element(self);  // (presized)
      try {
        element.value = self.call_with_args(sync, hook.object);
      } catch (...) {
        --self.collected_;  // (the element stays empty, dropped at the end)
        throw;
      }
      name_producer(element, hook);
    } else {
      self.outputs_.push_back(self.call_with_args(sync, hook.object));
    }
  }
  // A list of attributed outputs collected in place is made with an element for every output the
  // dispatch can have (reserve_outputs, make_list_for_default), each filled in turn and the rest
  // dropped at the end: no code to grow it (for a verdict, 1 KB: the vector's insertion that
  // reallocates).
  static constexpr bool presized = collects_in_place && attributed;
  HOOKSET_ALWAYS_INLINE static Attributed<result>& next_element(Dispatch& self) {
    if constexpr (presized) {
      const bool room = self.collected_ < self.outputs_.size();
      HOOKSET_ASSUME(room);
      return self.outputs_[self.collected_++];
    } else {
      return self.outputs_.emplace_back();
    }
  }
  // Makes the element in place (emplace_back converts it: no temporary Attributed to move).
  struct attribute {
    result& value;
    const entry* producer;
    operator Attributed<result>() const {
      if (!producer) return {std::move(value), HookId{}, std::string()};
      const std::string& name = producer->record->name;
      return {std::move(value), producer->id(), name.empty() ? std::string() : name};
    }
  };
  // The output watch of a watched dispatch (null: none).
  static output_watch<result>* watched(const Dispatch& self) noexcept {
    if (!self.has_context()) return nullptr;
    return static_cast<output_watch<result>*>(self.context_->watch());
  }
};

}  // namespace hookset::detail
