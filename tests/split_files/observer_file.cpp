// A file that makes an observer and includes nothing but <hookset/observer.hpp>: it must define
// the code of the dispatches the observer watches (detail::watched_code), because the file that
// dispatches (main.cpp) names none of it.
#include <atomic>
#include <cstdint>
#include <string_view>

#include <hookset/observer.hpp>

namespace {

struct CountingObserver : hookset::Observer {
  std::atomic<int> begun{0};
  void on_dispatch_begin(std::string_view, std::uint64_t) override { ++begun; }
};

CountingObserver counting;

}  // namespace

void install_counting_observer() { hookset::set_observer(&counting); }
void remove_counting_observer() { hookset::set_observer(nullptr); }
int dispatches_counted() { return counting.begun.load(); }
