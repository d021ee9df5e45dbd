#pragma once
// Inlining hints for the few functions on every synchronous dispatch's path: inlined into the
// caller, the dispatch of a slot without hooks reduces to a call of its default.

#if defined(__GNUC__) || defined(__clang__)
#define HOOKSET_ALWAYS_INLINE [[gnu::always_inline]] inline
#define HOOKSET_NOINLINE [[gnu::noinline]]
#else
#define HOOKSET_ALWAYS_INLINE inline
#define HOOKSET_NOINLINE
#endif

// Every access to one of the library's thread_local variables goes through a function marked
// HOOKSET_THREAD_LOCAL_ACCESS. Clang may compute a thread_local's address once in a coroutine
// and use it after the coroutine resumed on another thread - code inlined into a coroutine body
// counts - so a dispatch finishing on a timer thread wrote the awaiting thread's variables
// (llvm/llvm-project issues 47179 and 63022: fixed case by case, seen with clang++-16 -O1 here).
// Kept out of line there, such a function computes the address on the thread that calls it. GCC
// does not hoist it: inline.
#if defined(__clang__)
#define HOOKSET_THREAD_LOCAL_ACCESS HOOKSET_NOINLINE inline
#else
#define HOOKSET_THREAD_LOCAL_ACCESS inline
#endif
