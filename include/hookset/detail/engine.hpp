#pragma once
// The dispatch engine, split by concern over detail/dispatch/ (dispatch.hpp has the overview).

#include <hookset/detail/dispatch/attribution.hpp>     // IWYU pragma: export
#include <hookset/detail/dispatch/call.hpp>            // IWYU pragma: export
#include <hookset/detail/dispatch/concurrent.hpp>      // IWYU pragma: export
#include <hookset/detail/dispatch/dispatch.hpp>        // IWYU pragma: export
#include <hookset/detail/dispatch/driver.hpp>          // IWYU pragma: export
#include <hookset/detail/dispatch/hook_loop.hpp>       // IWYU pragma: export
#include <hookset/detail/dispatch/intercept.hpp>       // IWYU pragma: export
#include <hookset/detail/dispatch/pipeline_rules.hpp>  // IWYU pragma: export
#include <hookset/detail/dispatch/plain_loops.hpp>     // IWYU pragma: export
#include <hookset/detail/dispatch/rules.hpp>           // IWYU pragma: export
#include <hookset/detail/dispatch/steps.hpp>           // IWYU pragma: export
#include <hookset/detail/dispatch/watched.hpp>         // IWYU pragma: export
