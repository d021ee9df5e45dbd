// Placeholder: the real quickstart (the README's example) replaces this file.
#include <cstdio>

int main() {
  std::puts("quickstart placeholder");
  return 0;
}
