// The consumer's slots and set, shared by the program and its plugin (consumer_plugin.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <hookset/hookset.hpp>

namespace consumer {

struct Greeting : hookset::Slot<std::string(std::string_view name), hookset::Always> {
  static std::string default_impl(std::string_view name) { return "hello " + std::string(name); }
};
struct PickModel : hookset::Slot<std::optional<std::string>(std::string_view task),
                                 hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(std::string_view) { return "small"; }
};
using Hooks = hookset::HookSet<Greeting, PickModel>;

}  // namespace consumer
