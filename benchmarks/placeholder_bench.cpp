// Placeholder: exercises the benchmark machinery until the real dispatch benchmarks replace it.
#include <benchmark/benchmark.h>

#include <string>

namespace {

void BM_placeholder_string_copy(benchmark::State& state) {
  const std::string source(64, 'x');
  for (auto _ : state) {
    std::string copy = source;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_placeholder_string_copy);

}  // namespace
