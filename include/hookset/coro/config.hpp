#pragma once
// How hookset's code is compiled: header-only, or with its slot-independent part compiled once;
// and inlining hints for the few functions on every synchronous dispatch's path.

// Header-only (the default), or separate compilation: a program that defines
// HOOKSET_SEPARATE_COMPILATION in every one of its files (a compiler option, not a #define
// above some includes) compiles `#include <hookset/impl/src.hpp>` in exactly one of them, and
// the code that does not depend on a slot's types - the timer thread, the hook lists'
// bookkeeping and ordering, the observer plumbing, the error texts - is compiled there once
// instead of in every file that dispatches. A function of that part is declared HOOKSET_DECL
// in its header and defined in <hookset/impl/*.ipp>, which the header includes in header-only
// mode only (Asio's scheme). One kept out of line in both modes is declared without it and
// defined `HOOKSET_NOINLINE HOOKSET_DECL` (GCC warns of an inline declaration that is not a
// definition given noinline): the code a dispatch reaches only when watched or failing (the
// context, the observer events, the error texts), which header-only mode would otherwise inline
// into the engine of every slot kind.
#if defined(HOOKSET_SEPARATE_COMPILATION)
#define HOOKSET_DECL
#else
#define HOOKSET_HEADER_ONLY 1
#define HOOKSET_DECL inline
#endif

// Inlined into the caller, the dispatch of a slot without hooks reduces to a call of its default.
// Only where the compiler optimises: at -O0 the compilers inline an always_inline function all
// the same, and every call site of a dispatch became its whole unoptimised path (3.7 KB of code
// and 10x the compiler's work a call site, GCC) for no speed anyone measures there.
#if defined(__GNUC__) || defined(__clang__)
#define HOOKSET_NOINLINE [[gnu::noinline]]
#if defined(__OPTIMIZE__)
#define HOOKSET_ALWAYS_INLINE [[gnu::always_inline]] inline
#else
#define HOOKSET_ALWAYS_INLINE inline
#endif
#else
#define HOOKSET_ALWAYS_INLINE inline
#define HOOKSET_NOINLINE
#endif

// Whether the optimiser knows `value` as a constant where the code ends up (after inlining):
// code for a known value may then take a path that pays only there. False without the builtin.
#if defined(__GNUC__) || defined(__clang__)
#define HOOKSET_KNOWN_CONSTANT(value) __builtin_constant_p(value)
#else
#define HOOKSET_KNOWN_CONSTANT(value) false
#endif

// Tells the optimiser a fact it cannot see across an out-of-line call. Undefined behaviour
// where it does not hold: a build without NDEBUG traps there instead.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(NDEBUG)
#define HOOKSET_ASSUME(condition) ((condition) ? void(0) : __builtin_trap())
#elif defined(__clang__)
#define HOOKSET_ASSUME(condition) __builtin_assume(condition)
#elif defined(__GNUC__)
#define HOOKSET_ASSUME(condition) ((condition) ? void(0) : __builtin_unreachable())
#else
#define HOOKSET_ASSUME(condition) void(0)
#endif

// Every access to one of the library's thread_local variables is made by a function marked
// HOOKSET_THREAD_LOCAL_ACCESS - an accessor, or the function that needs the variable itself (a
// Task's await of a dispatch sets the scoped context so: detail::await_context_scope_here) - or,
// said where, directly by a function kept out of line in both modes that is not a coroutine
// (detail::lean_sync_dispatch_scope). Clang may compute a thread_local's address once in a
// coroutine and use it after the coroutine resumed on another thread - code inlined into a
// coroutine body counts - so a dispatch finishing on a timer thread wrote the awaiting thread's
// variables (llvm/llvm-project issues 47179 and 63022: fixed case by case, seen with clang++-16
// -O1 here). Kept out of line there, such a function computes the address on the thread that
// calls it. GCC does not hoist it: inline. They stay in the headers in both modes (each is a few
// instructions on a dispatch's path); a function of the separately compiled part that reaches a
// thread_local is HOOKSET_NOINLINE as well, which holds under link-time optimisation too.
#if defined(__clang__)
#define HOOKSET_THREAD_LOCAL_ACCESS HOOKSET_NOINLINE inline
#else
#define HOOKSET_THREAD_LOCAL_ACCESS inline
#endif
