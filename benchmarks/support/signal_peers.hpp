#pragma once
// The Boost.Signals2 and libsigc++ 3 side of the peers: the slot every fold scenario connects, the
// combiners / accumulators that do the scenarios' work, and the signal types. Shared by the timed
// programs (through peers.hpp) and the instruction-count program, which must not include
// peers.hpp: that brings alloc_counter.hpp, whose replaced operator new would change what the
// other instruction rows count.
//
// Signals2 and libsigc++ slots cannot see the previous output, so in the fold scenarios their
// slots return the hook's contribution (s.size()) and the combiner / accumulator folds it into
// `last` (last + s.size(), exactly what fold_hook computes). Everywhere else the slots are the
// hooks themselves.

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

// Peer headers are not ours to fix: no warnings from them.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <boost/optional.hpp>
#include <boost/signals2/signal.hpp>
#if HOOKSET_HAVE_SIGCXX
#include <sigc++/sigc++.h>
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "common.hpp"

namespace hookset_bench {

// The contribution a Signals2 / libsigc++ slot returns in the fold scenarios.
inline constexpr auto size_hook = [](std::string_view s) noexcept {
  return static_cast<int>(s.size());
};

// ---- Boost.Signals2 combiners and libsigc++ accumulators
// --------------------------------------------- Both libraries call them with an iterator range
// whose dereference invokes the slot.

// Fold without the default: nullopt for no slots, else the fold of the outputs.
struct fold_combiner {
  using result_type = std::optional<int>;
  template <class It>
  result_type operator()(It first, It last) const {
    std::optional<int> acc;
    for (; first != last; ++first) acc = acc.value_or(0) + *first;
    return acc;
  }
};

// Short-circuit chain: nullopt for no slots, else the first empty output or the last output.
struct chain_combiner {
  using result_type = std::optional<std::optional<int>>;
  template <class It>
  result_type operator()(It first, It last) const {
    result_type out;
    for (; first != last; ++first) {
      out = *first;
      if (!*out) break;
    }
    return out;
  }
};

// Aggregate: collects every output (the default is connected as the first slot) and sums them.
struct aggregate_combiner {
  using result_type = int;
  template <class It>
  result_type operator()(It first, It last) const {
    std::vector<int> outputs;
    for (; first != last; ++first) outputs.push_back(*first);
    return Sum{}(std::move(outputs));
  }
};

// Singleton: the output of the (at most one) slot.
struct last_value_combiner {
  using result_type = std::optional<int>;
  template <class It>
  result_type operator()(It first, It last) const {
    result_type out;
    for (; first != last; ++first) out = *first;
    return out;
  }
};

template <class R, class Combiner>
using signals2_signal = boost::signals2::signal<R(std::string_view), Combiner>;

#if HOOKSET_HAVE_SIGCXX
template <class R, class Accumulator>
using sigcxx_signal = typename sigc::signal<R(std::string_view)>::template accumulated<Accumulator>;
#endif

}  // namespace hookset_bench
