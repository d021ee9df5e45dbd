#pragma once
// hookset::stop_token, hookset::stop_source, hookset::stop_callback (and nostopstate): the
// standard's <stop_token> types where the standard library has them (then these names are the
// std:: ones, so std::stop_token and hookset::stop_token are interchangeable), and
// coro/own_stop_token.hpp's implementation of the same interface where it has not (libc++
// before 17). What a hook takes as its stop token, and CallOptions::stop_token, is this type.
//
// HOOKSET_FORCE_OWN_STOP_TOKEN (tests only, and the same in every translation unit of a
// program) selects the own implementation everywhere.

#include <version>

#if defined(__cpp_lib_jthread) && !defined(HOOKSET_FORCE_OWN_STOP_TOKEN)
#include <stop_token>

namespace hookset {
using std::nostopstate;
using std::nostopstate_t;
using std::stop_callback;
using std::stop_source;
using std::stop_token;
}  // namespace hookset
#else
#include <hookset/coro/own_stop_token.hpp>

namespace hookset {
using detail::own_stop::nostopstate;
using detail::own_stop::nostopstate_t;
using detail::own_stop::stop_callback;
using detail::own_stop::stop_source;
using detail::own_stop::stop_token;
}  // namespace hookset
#endif
