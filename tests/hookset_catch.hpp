// The one Catch2 include of hookset's tests: every test file includes "hookset_catch.hpp".
// Picks Catch2 v3 (<catch2/catch_all.hpp>) or v2 (<catch2/catch.hpp>). CMake passes the major
// version it found as HOOKSET_CATCH2_MAJOR, so the header matches the library being linked even if
// both versions are installed; without it, __has_include decides.
#pragma once

#if !defined(HOOKSET_CATCH2_MAJOR)
#if __has_include(<catch2/catch_all.hpp>)
#define HOOKSET_CATCH2_MAJOR 3
#elif __has_include(<catch2/catch.hpp>)
#define HOOKSET_CATCH2_MAJOR 2
#else
#error "hookset tests need Catch2 v2 (<catch2/catch.hpp>) or v3 (<catch2/catch_all.hpp>)"
#endif
#endif

#if HOOKSET_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#include <string>
// v3 spellings, so a test reads the same under both versions.
namespace Catch {
using Detail::Approx;
namespace Matchers {
inline StdString::ContainsMatcher ContainsSubstring(std::string const& str,
                                                    CaseSensitive::Choice cs = CaseSensitive::Yes) {
  return Contains(str, cs);
}
}  // namespace Matchers
}  // namespace Catch
#endif
