#pragma once
// detail::late<T>: storage for a T whose lifetime its owner runs by hand - constructed with
// emplace, ended with take or destroy. For a value that exists only on some paths (a suspended
// dispatch's pending awaitable): constructing the owner writes nothing for it, where a
// std::optional would write its engaged flag.

#include <new>
#include <utility>

namespace hookset::detail {

// The owner knows whether a value is there and ends its lifetime before late's own ends:
// late's destructor does not (it cannot tell).
template <class T>
class late {
 public:
  late() noexcept {}
  late(const late&) = delete;
  late& operator=(const late&) = delete;
  ~late() {}
  template <class... As>
  T& emplace(As&&... as) {
    return *::new (static_cast<void*>(&value_)) T(std::forward<As>(as)...);
  }
  T& get() noexcept { return value_; }
  T take() {
    T taken = std::move(value_);
    value_.~T();
    return taken;
  }
  void destroy() noexcept { value_.~T(); }

 private:
  union {
    T value_;
  };
};

}  // namespace hookset::detail
