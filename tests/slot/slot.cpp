#include "hookset_catch.hpp"

#include <optional>
#include <string>
#include <type_traits>

#include <hookset/companions.hpp>
#include <hookset/detail/engine.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/slot.hpp>

namespace app {
struct ValidatePrompt
    : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Always> {};
struct Named : hookset::Slot<int(), hookset::Fallback> {
  static constexpr std::string_view name = "tenant.choose_model";
};
template <class T>
struct Generic : hookset::Slot<T(), hookset::Singleton> {};
struct Summed : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<struct Sum>> {};
struct Labelled : hookset::Slot<int(int), hookset::Fallback, hookset::Chain<hookset::FirstSuccess>,
                                hookset::Finalize<struct ToText>, hookset::Output<std::string>> {};
struct Notify : hookset::Slot<void(int&), hookset::Always> {};
}  // namespace app

namespace {
struct InAnonymousNamespace : hookset::Slot<void(), hookset::Always> {};
}  // namespace

// What the engine is keyed by: the slot's kind.
template <class S>
using slot_traits = hookset::detail::kind_of<S>;

TEST_CASE("slot_name is the unqualified type name unless the slot declares one") {
  STATIC_REQUIRE(hookset::slot_name<app::ValidatePrompt> == "ValidatePrompt");
  STATIC_REQUIRE(hookset::slot_name<app::Named> == "tenant.choose_model");
  STATIC_REQUIRE(hookset::slot_name<app::Generic<app::Named>> == "Generic<app::Named>");
  STATIC_REQUIRE(hookset::slot_name<InAnonymousNamespace> == "InAnonymousNamespace");
  struct LocalSlot : hookset::Slot<void(), hookset::Fallback> {};
  STATIC_REQUIRE(hookset::slot_name<LocalSlot> == "LocalSlot");
}

TEST_CASE("slot options are parsed into mode, companions and output type") {
  using validate = slot_traits<app::ValidatePrompt>;
  STATIC_REQUIRE(validate::is_always);
  STATIC_REQUIRE(validate::is_fold);
  STATIC_REQUIRE(std::is_same_v<validate::output, std::optional<std::string>>);

  using summed = slot_traits<app::Summed>;
  STATIC_REQUIRE(summed::has_aggregate);
  STATIC_REQUIRE_FALSE(summed::is_fold);

  using labelled = slot_traits<app::Labelled>;
  STATIC_REQUIRE(labelled::is_fallback);
  STATIC_REQUIRE(labelled::has_chain);
  STATIC_REQUIRE(labelled::has_finalize);
  STATIC_REQUIRE(std::is_same_v<labelled::chain, hookset::FirstSuccess>);
  STATIC_REQUIRE(std::is_same_v<labelled::output, std::string>);

  STATIC_REQUIRE(slot_traits<app::Generic<int>>::is_singleton);
  STATIC_REQUIRE_FALSE(slot_traits<app::Generic<int>>::is_fold);
  STATIC_REQUIRE(slot_traits<app::Notify>::is_void);
  STATIC_REQUIRE_FALSE(slot_traits<app::Notify>::is_fold);
}

namespace app {
struct CountA : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) { return static_cast<int>(s.size()); }
};
struct CountB : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view) { return 7; }
  static constexpr std::string_view name = "count.b";
};
struct CountC : hookset::Slot<int(std::string_view), hookset::Fallback> {
  static int default_impl(std::string_view) { return 0; }
};
}  // namespace app

TEST_CASE(
    "slots with one signature and options share the engine, the slot contributes a descriptor") {
  using hookset::detail::kind_of;
  // One kind: one instantiation of the dispatch, the storage and the hook adapters.
  STATIC_REQUIRE(std::is_same_v<kind_of<app::CountA>, kind_of<app::CountB>>);
  STATIC_REQUIRE(std::is_same_v<hookset::detail::dispatch<kind_of<app::CountA>>,
                                hookset::detail::dispatch<kind_of<app::CountB>>>);
  STATIC_REQUIRE_FALSE(std::is_same_v<kind_of<app::CountA>, kind_of<app::CountC>>);
  // What differs is run-time data: the name and the default.
  STATIC_REQUIRE(hookset::detail::descriptor_of<app::CountB>.name == "count.b");
  CHECK(hookset::detail::descriptor_of<app::CountA>.default_sync(nullptr, "four") == 4);
  CHECK(hookset::detail::descriptor_of<app::CountB>.default_sync(nullptr, "four") == 7);
  CHECK(hookset::detail::descriptor_of<app::CountA>.default_async == nullptr);
}
