#include <hookset/hookset.hpp>

#include <iostream>
#include <optional>
#include <string>

// 1. Declare each decision point once, as a slot: signature, mode, companions, default.
struct ValidatePrompt
    : hookset::Slot<std::optional<std::string>(std::string_view prompt), hookset::Always> {
  static std::optional<std::string> default_impl(std::string_view prompt) {
    if (prompt.empty()) return "prompt must not be empty";
    return std::nullopt;
  }
};
struct ChooseModel : hookset::Slot<std::optional<std::string>(std::string_view task),
                                   hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static hookset::Task<std::optional<std::string>> default_impl(std::string_view) {
    co_return "small";
  }
};
using AppHooks = hookset::HookSet<ValidatePrompt, ChooseModel>;

int main() {
  // 2. Plug hooks in. ValidatePrompt folds: each hook sees the previous verdict as `last`.
  AppHooks hooks;
  hooks.add<ValidatePrompt>(
      [](std::string_view prompt,
         std::optional<std::optional<std::string>> last) -> std::optional<std::string> {
        if (last && *last) return *last;  // keep an earlier rejection
        if (prompt.find("sk-") != std::string_view::npos) return "prompt looks like an API key";
        return std::nullopt;
      });
  // ChooseModel: the first hook that knows the answer wins; hooks may be coroutines.
  hooks.add<ChooseModel>([](std::string_view task) -> hookset::Task<std::optional<std::string>> {
    if (task == "summarize a book") co_return "large";
    co_return std::nullopt;
  });

  // 3. Dispatch at the application's own decision points.
  for (std::string_view prompt : {"", "my key is sk-123", "hello"}) {
    const std::optional<std::string> rejection =
        hookset::sync_wait(hooks.call<ValidatePrompt>(prompt));
    std::cout << '"' << prompt << "\" -> " << rejection.value_or("ok") << '\n';
  }
  for (std::string_view task : {"summarize a book", "say hi"})
    std::cout << task << " -> " << *hookset::sync_wait(hooks.call<ChooseModel>(task)) << '\n';
}
