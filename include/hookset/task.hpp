#pragma once
// hookset::Task<T> and hookset::sync_wait: the coroutine runtime's public part (the runtime
// itself lives in <hookset/coro/>).

#include <hookset/coro/sync_wait.hpp>
#include <hookset/coro/task.hpp>
