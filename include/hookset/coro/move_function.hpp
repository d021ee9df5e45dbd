#pragma once
// detail::move_function<R(Args...)>: a move-only, type-erased callable - what the library
// stores where it needs "some function" (an Executor timer's expiry, a keyed matcher's
// predicate) without <functional>, whose libstdc++ version pulls in much of the library.
// Like std::function, it calls its target as a non-const lvalue, also through a const
// move_function; unlike it, it does not need the target to be copyable.

#include <memory>
#include <type_traits>
#include <utility>

namespace hookset::detail {

template <class Signature>
class move_function;

template <class R, class... Args>
class move_function<R(Args...)> {
 public:
  move_function() noexcept = default;
  move_function(std::nullptr_t) noexcept {}  // NOLINT: converts like std::function's
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, move_function> &&
           std::is_invocable_r_v<R, std::decay_t<F>&, Args...>)
      move_function(F&& f)  // NOLINT: converts from any callable, like std::function
      : target_(new holder<std::decay_t<F>>(std::forward<F>(f))) {}

  move_function(move_function&& other) noexcept = default;
  move_function& operator=(move_function&& other) noexcept = default;
  move_function& operator=(std::nullptr_t) noexcept {
    target_.reset();
    return *this;
  }
  ~move_function() = default;

  explicit operator bool() const noexcept { return target_ != nullptr; }

  // Calling an empty move_function is a precondition violation (the library never does).
  R operator()(Args... args) const { return target_->call(std::forward<Args>(args)...); }

 private:
  struct callable {
    virtual ~callable() = default;
    virtual R call(Args&&... args) = 0;
  };
  template <class F>
  struct holder final : callable {
    template <class G>
    explicit holder(G&& g) : f(std::forward<G>(g)) {}
    R call(Args&&... args) override {
      if constexpr (std::is_void_v<R>) f(std::forward<Args>(args)...);
      else return f(std::forward<Args>(args)...);
    }
    F f;
  };

  std::unique_ptr<callable> target_;
};

}  // namespace hookset::detail
