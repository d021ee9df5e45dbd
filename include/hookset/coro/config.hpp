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
