// The plugin the instruction-count program's `fold plugin` rows load: the `fold hookset` rows'
// hook (support/common.hpp), registered from a shared library through hookset::PluginHost, as
// many times as the program asks. A hook from a plugin must cost what the same hook registered
// directly costs: the library's lifetime is held by the snapshot, not counted per call.
#include <hookset/plugin.hpp>

#include "../support/common.hpp"

using BenchHooks = hookset::HookSet<hookset_bench::AlwaysFold>;

// How many hooks to register: the program's (exported to its plugins).
extern "C" long hookset_bench_plugin_hooks();

HOOKSET_PLUGIN(BenchHooks, registrar) {
  for (long i = 0; i < hookset_bench_plugin_hooks(); ++i)
    registrar.add<hookset_bench::AlwaysFold>(hookset_bench::fold_hook);
}
