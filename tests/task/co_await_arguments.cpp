// The spelling the docs recommend for co_await-ing a dispatch whose argument owns memory: a
// named local (copied or moved), never a braced temporary in the co_await operand. GCC 12
// destroys such a temporary twice (a double free; GCC PR 100611 / 101367); this pins that the
// named spellings are right - each argument constructed and destroyed exactly once, the hooks
// seeing its value - on every compiler, and under the sanitizer stages.
#include "hookset_catch.hpp"

#include <optional>
#include <string>
#include <utility>

#include <hookset/hookset.hpp>

namespace {

int live_requests = 0;  // constructed minus destroyed Request objects

struct Request {
  int id = 0;
  std::string text;  // owns heap memory: a second destruction is a double free
  Request(int i, std::string t) : id(i), text(std::move(t)) { ++live_requests; }
  Request(const Request& other) : id(other.id), text(other.text) { ++live_requests; }
  Request(Request&& other) noexcept : id(other.id), text(std::move(other.text)) { ++live_requests; }
  Request& operator=(const Request&) = default;
  Request& operator=(Request&&) = default;
  ~Request() { --live_requests; }
};

struct Audit : hookset::Slot<std::string(Request), hookset::Always> {
  static std::string default_impl(const Request& r) { return r.text; }
};

hookset::Task<std::string> audit_named(const hookset::HookSet<Audit>& hooks) {
  Request request{1, "a request long enough to live on the heap, not in the SSO buffer"};
  std::string first = co_await hooks.call<Audit>(request);              // copied into the dispatch
  std::string second = co_await hooks.call<Audit>(std::move(request));  // moved into it
  co_return first + "|" + second;
}

}  // namespace

TEST_CASE("co_await of a dispatch with a named argument: constructed and destroyed once each") {
  hookset::HookSet<Audit> hooks;
  hooks.add<Audit>(
      [](const Request& r, std::optional<std::string> last) -> hookset::Task<std::string> {
        co_return *last + "#" + std::to_string(r.id);
      });
  live_requests = 0;
  const std::string result = hookset::sync_wait(audit_named(hooks));
  const std::string text = "a request long enough to live on the heap, not in the SSO buffer";
  CHECK(result == text + "#1|" + text + "#1");
  CHECK(live_requests == 0);  // every copy and move destroyed exactly once
}
