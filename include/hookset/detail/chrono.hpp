#pragma once
// What hookset uses of std::chrono: clocks, durations, time points and their literals.
//
// Why not always <chrono>: since C++20, libstdc++'s <chrono> adds the calendar, time zones and
// their stream input, which bring <sstream> - parsed by every file that includes hookset, for
// names hookset never uses. libstdc++ keeps the part hookset uses in <bits/chrono.h> (since
// GCC 11); another standard library, or one without that file, gets <chrono>. A program that
// uses the rest of <chrono> includes it, as it would anyway.

#include <version>

#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif
