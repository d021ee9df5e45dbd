#pragma once
// hookset::Executor and hookset::default_executor(): part of the coroutine runtime, which lives
// in <hookset/coro/>; this name stays for the code that includes it.

#include <hookset/coro/executor.hpp>
