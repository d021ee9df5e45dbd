// The clock of per-hook events (HookEvent::duration): the cheapest monotonic source the
// platform has, because a dispatch with hook events reads it at every hook boundary.
//
// On x86-64 with an invariant TSC (CPUID 0x80000007, EDX bit 8: constant rate, ticking in
// every power state) it is the time-stamp counter, about 2.5x cheaper than
// steady_clock::now() on a kvm-clock VM; the first use calibrates it against steady_clock
// for about a millisecond, once per process. Elsewhere (other CPUs, a TSC that is not
// invariant, compilers without the builtins) it is steady_clock itself.
#pragma once

#include <chrono>
#include <cstdint>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
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

  static tsc_calibration calibrate() noexcept {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 8)))
      return {};  // no invariant TSC: steady_clock
    // Ticks against steady_clock over about a millisecond: the rate to within a few parts per
    // ten thousand, plenty for hook durations.
    using steady = std::chrono::steady_clock;
    const steady::time_point t0 = steady::now();
    const ticks c0 = __builtin_ia32_rdtsc();
    steady::time_point t1 = t0;
    while (t1 - t0 < std::chrono::milliseconds(1)) t1 = steady::now();
    const ticks c1 = __builtin_ia32_rdtsc();
    if (c1 <= c0) return {};
    const double ns =
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    return {true, ns / static_cast<double>(c1 - c0)};
  }
#endif
};

}  // namespace hookset::detail
