// The clock of per-hook events (HookEvent::duration): the cheapest monotonic source the
// platform has, because a dispatch with hook events reads it at every hook boundary.
//
// On x86-64 with an invariant TSC (CPUID 0x80000007, EDX bit 8: constant rate, ticking in
// every power state) it is the time-stamp counter, about 2.5x cheaper than
// steady_clock::now() on a kvm-clock VM; the first use calibrates it against steady_clock
// for about a millisecond, once per process. Elsewhere (other CPUs, a TSC that is not
// invariant, compilers without the builtins) it is steady_clock itself.
#pragma once

#include <cstdint>

#include <hookset/coro/config.hpp>
#include <hookset/detail/chrono.hpp>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HOOKSET_HOOK_CLOCK_TSC 1
#else
#define HOOKSET_HOOK_CLOCK_TSC 0
#endif

namespace hookset::detail {

struct hook_clock {
  // A reading: TSC ticks, or steady_clock nanoseconds.
  using ticks = std::uint64_t;

  static ticks now() noexcept {
#if HOOKSET_HOOK_CLOCK_TSC
    if (calibration().usable) return __builtin_ia32_rdtsc();
#endif
    return steady_ns();
  }

  // The time between two readings (zero if `to` is not later: a hook resumed on another core
  // may see a TSC a few ticks behind).
  static std::chrono::nanoseconds between(ticks from, ticks to) noexcept {
    if (to <= from) return std::chrono::nanoseconds{0};
    const ticks elapsed = to - from;
#if HOOKSET_HOOK_CLOCK_TSC
    if (calibration().usable)
      return std::chrono::nanoseconds{static_cast<std::int64_t>(
          static_cast<double>(elapsed) * calibration().ns_per_tick + 0.5)};  // (rounded)
#endif
    return std::chrono::nanoseconds{static_cast<std::int64_t>(elapsed)};
  }

  // Whether readings come from the TSC (for tests and the docs).
  static bool uses_tsc() noexcept {
#if HOOKSET_HOOK_CLOCK_TSC
    return calibration().usable;
#else
    return false;
#endif
  }

 private:
  static ticks steady_ns() noexcept {
    return static_cast<ticks>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                                  .count());
  }

#if HOOKSET_HOOK_CLOCK_TSC
  struct tsc_calibration {
    bool usable = false;
    double ns_per_tick = 0;
  };

  static const tsc_calibration& calibration() noexcept {
    static const tsc_calibration calibrated = calibrate();
    return calibrated;
  }

  // (Once per process: <hookset/impl/hook_clock.ipp>.)
  HOOKSET_DECL static tsc_calibration calibrate() noexcept;
#endif
};

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/hook_clock.ipp>
#endif
