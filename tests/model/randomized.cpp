// Model-based randomized tests (docs/semantics.md, "Dispatch", "Extend", "Errors and bad input").
//
// Random sequences of operations - add (sync or coroutine hook, random priority, possibly via
// `with`), remove (ids of live, removed, foreign and null registrations), configure, copy, extend
// (from a set in the pool, itself, or a freshly built one), drop a set, call - run against a pool
// of up to three HookSets over slots of every mode and companion combination, and step by step
// against a small reference model written plainly from the dispatch table (docs/semantics.md): per
// slot a list of {token, priority, behaviour} in arrival order, stable-sorted by priority when
// dispatched.
//
// Every hook is data (`Behaviour`: a number k, whether it throws, whether it suspends, and which
// operations it performs on the pool each time it runs), so the model predicts each dispatch in
// full: the result, the sequence of default/hook/companion calls with what each was given, the
// hooks_run the observer reports, and the warnings. Five variants:
//   - plain: no mutation during dispatch;
//   - reentrant: running (sync or coroutine) hooks add, remove, configure, copy, extend and drop
//     sets, the dispatched one included; the dispatch keeps its snapshot, later ones see the
//     change;
//   - suspended: coroutine hooks park on an event; operations (and more dispatches) run while
//     dispatches are suspended, which are then released in random order;
//   - services: as suspended, plus failure policies (Propagate, FailOpen, FailClosed), per-hook
//     time limits (1 ns: expired when the hook returns; 1 h: never), dispatches stopped before
//     they start, from inside their k-th hook or while parked, and deadlines already passed;
//   - forms: as services, plus borrowed (std::ref), shared (std::shared_ptr) and Stateful hooks
//     (those never park, so their lock is never contended), one object
//     registered for every slot (add_hooks / with_hooks, the nested set's slots included), and
//     dispatches through a frozen copy (freeze()) or a SharedHookSet, gone once the dispatch
//     started, and dispatches made by running hooks (nested up to 3 deep, at most 32 per operation;
//     sync_wait inside the hook unless the nested dispatch parks, then started and left parked).
// Every variant also dispatches the pipeline slots (pass, rewrite, complete, reject), and registers
// interceptors (docs/semantics.md, section 21): per slot (intercept<S>) or set-wide
// (intercept_all), synchronous (coroutines only where hooks park: sync_wait would block) or
// coroutine, with a priority, each passing x on, replacing it by x + k, changing next's result,
// answering alone, throwing before next, or catching what next throws and answering instead;
// removed by id, copied, extended, frozen and shared with the hooks. The model predicts the
// interceptors' order (priority, then registration; the first outermost) and what each does
// around the dispatch's ordinary prediction, its calls included. Interceptors may also call
// next() a second time (which must fail with std::logic_error, running nothing), and have names
// and before/after constraints. Hooks and interceptors are ordered by priority, registration and
// named order (docs/semantics.md, section 13): registrations and extends whose constraints name
// nobody or form a cycle must throw OrderingError and change nothing. Two keyed slots (a fold
// and a Singleton, docs/semantics.md, section 22) take hooks for one key, a prefix, a glob, a
// predicate or every key; each dispatch picks a key, and the model predicts which hooks run (a
// keyed Singleton: the last selecting one; a registration replaces one of the same selector),
// the key every hook and the default gets (an interceptor replacing x also replaces the key:
// the hooks are then those of the new key), keys<S>() and has_hooks<S>(k).
// Observed sequences also check every per-hook observer event (interceptors' with
// HookEvent::interceptor: position, id, name, failed or not; hooks': position). With `services`,
// interceptor options with a failure policy or a time limit are refused; with `forms`, interceptors
// are also borrowed (std::ref) and shared (std::shared_ptr).
//
// Seeded: HOOKSET_SEED (default below) picks the sequences; the seed is printed. On a mismatch the
// failing prefix is shrunk (dropping operations while it still fails) and printed with the seed.
// HOOKSET_MODEL_SCALE multiplies the number of sequences (for longer soak runs);
// HOOKSET_MODEL_SEQUENCE=n runs only sequence n (to replay a reported failure).
//
// Beside this file: catalog.hpp (the slots and what their calls record), operations.hpp (the
// operations and their generator), reference_model.hpp (the model), executor.hpp (runs operations
// on real sets and on the model in lockstep, shrinking). Here: the seeds and the test cases.
#include "hookset_catch.hpp"

#include "executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace hookset_model;

constexpr std::uint64_t default_seed = 20240611;

// Every operation run by the test cases of this process (generated ones and those running hooks
// performed), each checked against the model.
std::size_t operations_checked = 0;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  return std::strtoull(text, nullptr, 10);
}

struct Variant {
  const char* name;
  Config config;
  int sequences;
  int length;
};

void run_variant(const Variant& variant) {
  const std::uint64_t seed = env_number("HOOKSET_SEED", default_seed);
  const std::uint64_t scale = std::max<std::uint64_t>(env_number("HOOKSET_MODEL_SCALE", 1), 1);
  const std::uint64_t only = env_number("HOOKSET_MODEL_SEQUENCE", ~0ULL);
  const int sequences = variant.sequences * static_cast<int>(scale);
  std::printf("[model/%s] HOOKSET_SEED=%llu: %d sequences of %d operations\n", variant.name,
              static_cast<unsigned long long>(seed), sequences, variant.length);
  std::fflush(stdout);

  Totals totals;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < sequences; ++n) {
    if (only != ~0ULL && only != static_cast<std::uint64_t>(n)) continue;
    Config config = variant.config;
    config.observe = n % 2 == 1;  // every other sequence also checks warnings and hooks_run
    Random mixer(seed ^ (std::uint64_t{0x9e37} * static_cast<std::uint64_t>(variant.name[0])));
    for (int skip = 0; skip <= n; ++skip) mixer.next();
    const std::uint64_t sequence_seed = mixer.next();
    Random r(sequence_seed);
    const std::vector<Op> ops = random_sequence(r, config, variant.length);

    if (auto failure = run_sequence(ops, config, sequence_seed, &totals)) {
      const std::size_t original_index = failure->index;
      const std::vector<Op> shrunk = shrink(ops, config, sequence_seed, *failure);
      std::ostringstream report;
      report << "[model/" << variant.name << "] mismatch with HOOKSET_SEED=" << seed
             << " HOOKSET_MODEL_SEQUENCE=" << n << (config.observe ? " (observed)" : "")
             << " at operation " << original_index << " of " << ops.size() << "\nshrunk to "
             << shrunk.size() << " operations, failing with: " << failure->message
             << "\n  (set~n: pool pick n modulo the pool size; hook~n: pick among the set's live "
                "hooks)\n"
             << describe(shrunk, "    ");
      FAIL(report.str());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[model/%s] %zu operations checked (+ %zu performed by running hooks), %zu dispatches "
      "(%.1f hooks each on average, %zu threw), up to %zu parked at once, %zu sets destroyed "
      "during their own dispatch, %.2f s\n",
      variant.name, totals.operations, totals.hook_operations, totals.dispatches,
      totals.dispatches
          ? static_cast<double>(totals.hooks_run) / static_cast<double>(totals.dispatches)
          : 0.0,
      totals.failed, totals.max_parked, totals.destroyed_in_flight, seconds);
  const Features& f = totals.features;
  if (variant.config.services || variant.config.forms)
    std::printf(
        "[model/%s] %zu dispatches stopped (%zu while parked), %zu past their deadline, %zu hook "
        "failures "
        "skipped (fail-open), %zu pipeline dispatches; registrations: %zu borrowed, %zu shared, "
        "%zu Stateful, %zu add_hooks; "
        "dispatches through %zu frozen and %zu shared sets; %zu dispatches made by running hooks\n",
        variant.name, f.stopped, f.stopped_parked, f.deadline, f.failed_open, f.pipelines,
        f.borrowed, f.shared, f.stateful, f.multi, f.frozen_calls, f.shared_calls, f.nested);
  std::printf(
      "[model/%s] interceptors: %zu intercept<S>, %zu intercept_all (%zu calling next() twice); "
      "%zu intercepted dispatches; %zu keyed dispatches, %zu registrations with a key, prefix, "
      "glob or predicate; %zu registrations with a before/after constraint, %zu refused with "
      "OrderingError (add, intercept, extend); %zu per-hook events checked\n",
      variant.name, f.interceptors, f.intercept_all, f.next_twice, f.intercepted, f.keyed_calls,
      f.keyed_selectors, f.named, f.refused, f.hook_marks);
  std::fflush(stdout);
  operations_checked += totals.operations + totals.hook_operations;
  std::printf("[model] %zu operations checked against the model so far in this run\n",
              operations_checked);
  std::fflush(stdout);
  if (only == ~0ULL) {  // each variant really does what it is there for
    REQUIRE(totals.operations >=
            static_cast<std::size_t>(sequences) * static_cast<std::size_t>(variant.length));
    REQUIRE(totals.dispatches > totals.operations / 4);
    if (variant.config.reentrant) REQUIRE(totals.hook_operations > 0);
    if (variant.config.reentrant) REQUIRE(totals.destroyed_in_flight > 0);
    if (variant.config.suspended) REQUIRE(totals.max_parked > 1);
    if (variant.config.services) {
      REQUIRE(f.stopped_parked > 0);
      REQUIRE(f.deadline > 0);
      REQUIRE(f.failed_open > 0);
    }
    if (variant.config.forms)
      REQUIRE((f.borrowed > 0 && f.shared > 0 && f.stateful > 0 && f.multi > 0 &&
               f.frozen_calls > 0 && f.shared_calls > 0));
    if (variant.config.nested) REQUIRE(f.nested > 0);
    REQUIRE((f.interceptors > 0 && f.intercept_all > 0 && f.intercepted > 0));
    REQUIRE((f.next_twice > 0 && f.keyed_calls > 0 && f.keyed_selectors > 0 && f.named > 0 &&
             f.refused > 0));
    if (sequences > 1) REQUIRE(f.hook_marks > 0);  // (observed: every other sequence)
  }
}

}  // namespace

TEST_CASE("random adds, removes, configures, copies, extends and calls match the model") {
  run_variant({"plain", Config{}, 250, 400});
}

TEST_CASE("registrations and removals from inside running hooks match the model") {
  run_variant({"reentrant", Config{true, false, false}, 100, 400});
}

TEST_CASE("mutations while dispatches are suspended in coroutine hooks match the model") {
  run_variant({"suspended", Config{true, true, false}, 100, 400});
}

TEST_CASE("failure policies, time limits, stop tokens and deadlines match the model") {
  Config config{true, true, false};
  config.services = true;
  run_variant({"services", config, 200, 400});
}

TEST_CASE(
    "borrowed and shared hooks, add_hooks, frozen and shared sets, with everything else, match the "
    "model") {
  Config config{true, true, false};
  config.services = true;
  config.forms = true;
  config.nested = true;
  run_variant({"forms", config, 200, 400});
}
