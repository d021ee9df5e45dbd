// A sample of the compile-fail machinery (to be replaced by real hookset rules).
// Each `// EXPECT: <regex>` line must match the compiler output, and the file must not compile.
// EXPECT: hookset: sample rule
static_assert(sizeof(int) == 0, "hookset: sample rule");
