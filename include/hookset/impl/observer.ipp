#pragma once
// What the library tells observers outside a dispatch (observer.hpp): compiled once with
// HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <string_view>

#include <hookset/coro/config.hpp>
#include <hookset/detail/observer_types.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL void warn(std::string_view slot, std::string_view message,
                                        Observer* set_observer) noexcept {
  notify(current_observer(), &Observer::on_warning, slot, message);
  notify(set_observer, &Observer::on_warning, slot, message);
}

}  // namespace hookset::detail
