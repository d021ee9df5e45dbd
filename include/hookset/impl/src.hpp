#pragma once
// hookset's separately compiled part: with HOOKSET_SEPARATE_COMPILATION defined in every file of
// a program (coro/config.hpp), exactly one of its files includes this header, and nothing else:
//
//   // hookset.cpp
//   #include <hookset/impl/src.hpp>
//
// It defines the code that does not depend on a slot's types (the timer thread, the hook lists'
// bookkeeping and ordering, the dispatch context, the observer plumbing, the error texts), which
// header-only mode compiles in every file that includes the headers.

#if !defined(HOOKSET_SEPARATE_COMPILATION)
#error \
    "<hookset/impl/src.hpp> is for separate compilation: define HOOKSET_SEPARATE_COMPILATION in every file of the program (header-only mode needs no source file)"
#endif

#include <hookset/impl/context.ipp>
#include <hookset/impl/errors.ipp>
#include <hookset/impl/events.ipp>
#include <hookset/impl/executor.ipp>
#include <hookset/impl/frame.ipp>
#include <hookset/impl/frame_pool.ipp>
#include <hookset/impl/hook_call.ipp>
#include <hookset/impl/hook_clock.ipp>
#include <hookset/impl/hook_list.ipp>
#include <hookset/impl/hook_outcome.ipp>
#include <hookset/impl/observer.ipp>
