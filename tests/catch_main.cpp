// Catch2 v2 only: the single translation unit that holds Catch's main() and runner. It is compiled
// once into a static library linked by every test. (With Catch2 v3, Catch2::Catch2WithMain is
// used.)
#define CATCH_CONFIG_MAIN
#include "hookset_catch.hpp"
