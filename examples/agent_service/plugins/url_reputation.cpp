// The URL reputation guard of the agent service, a plugin (hookset::PluginHost, docs/plugins.md):
// a PermitTool guard that denies a call whose URL's host is on the reputation service's
// blocklist - judged on the canonical host (ToolCall::url), however the URL was written. Two
// builds of this file (examples/CMakeLists.txt, URL_REPUTATION_BUILD): v1, the one in service at
// start-up, and v2, whose refusal says which build judged. The service swaps them while it runs:
//   POST /admin/plugins/url_reputation/reload?build=v2
// The plugin includes the slots alone (slots.hpp), not the server; it calls the program's
// remote_call and guard_time_limit, which the program exports (hookset_plugin_host).
#include "../slots.hpp"

#include <chrono>
#include <string>
#include <string_view>

#if !defined(URL_REPUTATION_BUILD)
#error "URL_REPUTATION_BUILD: which build of the plugin (1 or 2)"
#endif

using namespace std::chrono_literals;

namespace {

#if URL_REPUTATION_BUILD == 1
constexpr std::string_view refusal = "host on the blocklist";
#else
constexpr std::string_view refusal = "host on the blocklist (reputation list v2)";
#endif

// The reputation service's blocklist: these hosts and every name under them.
bool on_blocklist(const Host& host) {
  constexpr std::string_view blocked = "evil.example";
  return host.kind == HostKind::name &&
         (host.text == blocked || (host.text.ends_with(blocked) &&
                                   host.text[host.text.size() - blocked.size() - 1] == '.'));
}

}  // namespace

HOOKSET_PLUGIN(ServiceHooks, registrar) {
  // The reputation service answers in 3 ms (the egress policy, the program's own guard, in 1 ms:
  // this guard's deny beats its allow all the same).
  registrar.add<PermitTool>(
      [](const ToolCall& call) -> net::awaitable<hookset::Verdict<>> {
        if (!call.url) co_return hookset::Verdict<>{};
        co_await remote_call(3ms);
        if (on_blocklist(call.url->host))
          co_return hookset::Verdict<>{hookset::Permission::deny, std::string(refusal)};
        co_return hookset::Verdict<>{};
      },
      // (Named: Registrar::add forwards its arguments, and a braced list has no type to forward.)
      hookset::HookOptions{.name = "url-reputation", .timeout = guard_time_limit()});
}
