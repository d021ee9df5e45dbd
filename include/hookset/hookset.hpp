#pragma once
// hookset: named, typed, pluggable async function slots. One include for the core API.
// Opt-in, beside it: <hookset/trace.hpp> (Chrome trace writer), <hookset/asio.hpp> (Boost.Asio).

#include <hookset/call_options.hpp>
#include <hookset/clog_observer.hpp>
#include <hookset/companions.hpp>
#include <hookset/errors.hpp>
#include <hookset/executor.hpp>
#include <hookset/format.hpp>
#include <hookset/guard.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/hook_options.hpp>
#include <hookset/hook_set.hpp>
#include <hookset/interceptor.hpp>
#include <hookset/keyed.hpp>
#include <hookset/nested.hpp>
#include <hookset/observer.hpp>
#include <hookset/pipeline.hpp>
#include <hookset/shared_set.hpp>
#include <hookset/slot.hpp>
#include <hookset/stateful.hpp>
#include <hookset/stop_token.hpp>
#include <hookset/task.hpp>
#include <hookset/tripwire.hpp>
