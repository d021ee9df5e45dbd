// The one file of a program built with HOOKSET_SEPARATE_COMPILATION that compiles hookset's
// slot-independent code (coro/config.hpp).
#include <hookset/impl/src.hpp>
