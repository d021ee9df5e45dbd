#pragma once
// hookset::stop_token, stop_source, stop_callback: part of the coroutine runtime, which lives in
// <hookset/coro/>; this name stays for the code that includes it.

#include <hookset/coro/stop_token.hpp>
