#pragma once
// HookId (the handle of one registration) and Priority (a registration option).

#include <atomic>
#include <compare>
#include <cstdint>

namespace hookset {

// Identifies one registration, unique within the process. Copies and extended sets carry
// their entries' ids, so remove(id) works on whichever set holds the registration.
class HookId {
 public:
  constexpr HookId() noexcept = default;
  constexpr std::uint64_t value() const noexcept { return value_; }
  constexpr explicit operator bool() const noexcept { return value_ != 0; }
  friend constexpr bool operator==(HookId, HookId) noexcept = default;
  friend constexpr auto operator<=>(HookId, HookId) noexcept = default;

  // A fresh id; only registration calls this.
  static HookId next() noexcept {
    static std::atomic<std::uint64_t> counter{0};
    return HookId(counter.fetch_add(1, std::memory_order_relaxed) + 1);
  }

 private:
  constexpr explicit HookId(std::uint64_t value) noexcept : value_(value) {}
  std::uint64_t value_ = 0;
};

// Registration order option: lower runs earlier; equal priorities keep registration order.
struct Priority {
  int value = 0;
  friend constexpr bool operator==(Priority, Priority) noexcept = default;
  friend constexpr auto operator<=>(Priority, Priority) noexcept = default;
};

}  // namespace hookset
