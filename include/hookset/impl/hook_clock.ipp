#pragma once
// The hook clock's calibration (detail/hook_clock.hpp): compiled once with
// HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <hookset/coro/config.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/detail/hook_clock.hpp>

#if HOOKSET_HOOK_CLOCK_TSC
#include <cpuid.h>

namespace hookset::detail {

HOOKSET_DECL hook_clock::tsc_calibration hook_clock::calibrate() noexcept {
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

}  // namespace hookset::detail
#endif
