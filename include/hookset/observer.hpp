#pragma once
// Observers: where warnings, dispatch tracing and per-hook events go. One may be installed
// process-wide (set_observer) and one per set (HookSet::set_observer); a dispatch reports to
// both. The types: <hookset/detail/observer_types.hpp>.

#include <hookset/coro/config.hpp>
#include <hookset/detail/observer_types.hpp>

// An observer names the code of the dispatches it watches (detail::watched_code, which a file
// contains only where something turns watching on): in header-only mode it comes with this
// header, so that a file that makes an observer and dispatches nothing still defines it.
#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/detail/dispatch/hook_outcome.hpp>
#endif
