// The model-based fuzz target: the input bytes are decoded into a sequence of operations of the
// model tests (tests/model/operations.hpp), which the model executor (tests/model/executor.hpp)
// runs on real HookSets and on the reference model in lockstep. Any difference - a result, a call
// made by a dispatch, hooks_run, a warning, a count - prints the sequence and aborts, and so does
// anything the sanitizers catch.
//
// Built two ways (tests/fuzz/CMakeLists.txt):
//   - HOOKSET_FUZZ=ON (clang++-16, -fsanitize=fuzzer,address,undefined): a libFuzzer binary;
//   - otherwise, with HOOKSET_FUZZ_REPLAY defined: `test_fuzz_replay <file or directory>...` runs
//     every file given (directories: every file in them) once, and
//     `test_fuzz_replay --write-seeds <dir> <count>` writes the seed corpus (random sequences of
//     the model tests' generator, encoded).
//
// The byte format (tests/fuzz/README.md): byte 0 is the configuration, then 8-byte records, one
// operation each; an operation that carries operations (the mutations of a hook, a fresh set to
// extend from) takes the next records as those. A short tail is ignored. Every input is valid.
#include "executor.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hookset_fuzz {

using namespace hookset_model;

constexpr std::size_t record_size = 8;
constexpr std::size_t max_operations = 2000;

enum ConfigBits : std::uint8_t {
  kReentrant = 1,
  kSuspended = 2,
  kObserve = 4,
  kServices = 8,
  kForms = 16,
  kNested = 32
};

// ---- decoding -----------------------------------------------------------------------------------

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool has_record() const { return size_ - at_ >= record_size; }
  const std::uint8_t* record() {
    const std::uint8_t* r = data_ + at_;
    at_ += record_size;
    return r;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// One record as one operation (its nested operations, if any, are read by the caller).
//   r[0] kind (modulo 11: Add, Remove, Configure, Copy, Extend, ExtendFresh, Drop, Call, Release,
//   Cancel, Intercept) r[1] set pick (bits 0-2), other pick (bits 3-5) r[2] slot (modulo the number
//   of slots) r[3] value: signed for add (k), configure (parameter), call (x); unsigned for picks
//   r[4] priority (bits 0-2, minus 3), variant (bits 3-4), call: through (bits 5-6: 1 frozen, 2
//   shared) r[5] async (bit 0), throws (bit 1), suspends (bit 2), policy (bits 3-4), limit (bits
//   5-6, modulo 3) r[6] call: stop (bits 0-2: 0-2 none, 3 before the start, 4 deadline passed, 5-7
//   inside hook
//        1 + (bits 3-4)); add: ownership (bits 0-1: owned, std::ref, shared_ptr, Stateful),
//        add_hooks for every slot (bits 2-4 all set)
//   intercept: r[4] bits 3-5 what it does (modulo 6, Intercepts), r[5] bit 0 coroutine (always
//        when hooks may park), bits 3-4 options (services: Op::policy), r[6] bit 0
//        intercept_all, bits 1-2 ownership (forms: owned, std::ref, shared_ptr; 3 is owned)
//   r[7] bits 0-1: how many of the following records are this operation's nested operations
//   keyed slots and named order (tests/fuzz/README.md): add: r[7] bits 2-4 selector (modulo 6),
//        pattern r[1] bits 6-7 + r[5] bit 7 << 2; add, intercept: name r[6] bits 5-6 (add) or
//        3-4 (intercept), order r[7] bits 5-7 (7: none); call: key r[7] bits 2-4
inline Op decode_op(const std::uint8_t* r, const Config& config) {
  Op op;
  op.kind = static_cast<Op::Kind>(r[0] % 11);
  op.set = r[1] & 7;
  op.other = (r[1] >> 3) & 7;
  op.slot = r[2] % slot_count;
  const bool signed_value = op.kind == Op::Add || op.kind == Op::Configure || op.kind == Op::Call ||
                            op.kind == Op::Intercept;
  op.value = signed_value ? static_cast<int>(static_cast<std::int8_t>(r[3])) : r[3];
  op.priority = (r[4] & 7) - 3;
  const int variant = (r[4] >> 3) & 3;
  switch (op.kind) {
    case Op::Add:
    case Op::Extend:
      op.variant = variant & 1;
      break;
    case Op::Remove:
      op.variant = variant % 3;
      break;
    case Op::Configure:
      op.variant = variant % 3;
      break;
    case Op::Call:
      op.variant = config.services ? variant : variant & 1;
      if (config.forms) op.variant |= (((r[4] >> 5) & 3) % 3) << 2;
      break;
    default:
      break;
  }
  if (op.kind == Op::Add) {
    op.async = (r[5] & 1) != 0;
    op.throws = (r[5] & 2) != 0;
    op.suspend = (r[5] & 4) != 0;
    if (config.services) {
      op.policy = (r[5] >> 3) & 3;
      op.limit = ((r[5] >> 5) & 3) % 3;
    }
    if (config.forms) {
      op.own = r[6] & 3;
      op.multi = ((r[6] >> 2) & 7) == 7;
    }
    op.selector = ((r[7] >> 2) & 7) % selects_count;
    op.pattern = ((r[1] >> 6) & 3) | ((r[5] >> 7) << 2);
    op.name = (r[6] >> 5) & 3;
    op.order = ((r[7] >> 5) & 7) % 7;
    normalise(op, config);
  }
  if (op.kind == Op::Intercept) {
    op.variant = ((r[4] >> 3) & 7) % intercepts_count;
    op.async = (r[5] & 1) != 0;
    op.multi = (r[6] & 1) != 0;
    if (config.services) op.policy = (r[5] >> 3) & 3;
    if (config.forms) op.own = (r[6] >> 1) & 3;
    op.name = (r[6] >> 3) & 3;
    op.order = ((r[7] >> 5) & 7) % 7;
    normalise(op, config);
  }
  if (op.kind == Op::Call) {
    op.key = ((r[7] >> 2) & 7) % key_count;
    normalise(op);
  }
  if (op.kind == Op::Call && config.services) {
    const int stop = r[6] & 7;
    op.cancel = stop < 3 ? 0 : stop == 3 ? -1 : stop == 4 ? -2 : 1 + ((r[6] >> 3) & 3);
  }
  if (op.kind == Op::Cancel && !config.services) op.kind = Op::Release;
  return op;
}

inline std::pair<Config, std::vector<Op>> decode(const std::uint8_t* data, std::size_t size) {
  Config config;
  if (size == 0) return {config, {}};
  config.reentrant = (data[0] & kReentrant) != 0;
  config.suspended = (data[0] & kSuspended) != 0;
  config.observe = (data[0] & kObserve) != 0;
  config.services = (data[0] & kServices) != 0;
  config.forms = (data[0] & kForms) != 0;
  config.nested = (data[0] & kNested) != 0;
  Reader in(data + 1, size - 1);
  std::vector<Op> ops;
  while (in.has_record() && ops.size() < max_operations) {
    const std::uint8_t* r = in.record();
    Op op = decode_op(r, config);
    const int nested = r[7] & 3;
    if (op.kind == Op::ExtendFresh || (op.kind == Op::Add && config.reentrant && nested > 0)) {
      std::vector<Op> inner;
      for (int n = 0; n < nested && in.has_record(); ++n) {
        Op sub = decode_op(in.record(), config);
        if (op.kind == Op::ExtendFresh) {  // a fresh set: registrations and companions only
          if (sub.kind != Op::Configure && sub.kind != Op::Intercept) sub.kind = Op::Add;
        } else if ((sub.kind == Op::Call && !config.nested) || sub.kind == Op::Release ||
                   sub.kind == Op::Cancel) {
          sub.kind = Op::Remove;  // what a hook performs: changes to the pool
        }
        if (sub.kind == Op::ExtendFresh) sub.nested = std::make_shared<const std::vector<Op>>();
        inner.push_back(std::move(sub));
      }
      op.nested = std::make_shared<const std::vector<Op>>(std::move(inner));
      normalise(op);
    }
    ops.push_back(std::move(op));
  }
  return {config, std::move(ops)};
}

// ---- encoding (for the seed corpus) -----------------------------------------------------------

inline void encode_op(const Op& op, int nested, std::vector<std::uint8_t>& out) {
  std::uint8_t r[record_size] = {};
  r[0] = static_cast<std::uint8_t>(op.kind);
  r[1] = static_cast<std::uint8_t>((op.set & 7) | ((op.other & 7) << 3) |
                                   (op.kind == Op::Add ? (op.pattern & 3) << 6 : 0));
  r[2] = static_cast<std::uint8_t>(op.slot);
  r[3] = static_cast<std::uint8_t>(op.value & 0xff);
  r[4] = static_cast<std::uint8_t>(
      ((op.priority + 3) & 7) |
      (op.kind == Op::Intercept ? (op.variant & 7) << 3
                                : ((op.variant & 3) << 3) | (((op.variant >> 2) & 3) << 5)));
  r[5] = static_cast<std::uint8_t>((op.async ? 1 : 0) | (op.throws ? 2 : 0) | (op.suspend ? 4 : 0) |
                                   ((op.policy & 3) << 3) | ((op.limit & 3) << 5) |
                                   (op.kind == Op::Add ? ((op.pattern >> 2) & 1) << 7 : 0));
  if (op.kind == Op::Add)
    r[6] = static_cast<std::uint8_t>((op.own & 3) | (op.multi ? 7 << 2 : 0) | ((op.name & 3) << 5));
  else if (op.kind == Op::Intercept)
    r[6] =
        static_cast<std::uint8_t>((op.multi ? 1 : 0) | ((op.own & 3) << 1) | ((op.name & 3) << 3));
  else
    r[6] = static_cast<std::uint8_t>(op.cancel == -1   ? 3
                                     : op.cancel == -2 ? 4
                                     : op.cancel > 0   ? 5 | (((op.cancel - 1) & 3) << 3)
                                                       : 0);
  r[7] = static_cast<std::uint8_t>(nested |
                                   ((op.kind == Op::Add    ? op.selector
                                     : op.kind == Op::Call ? op.key
                                                           : 0) &
                                    7) << 2 |
                                   (op.order & 7) << 5);
  out.insert(out.end(), r, r + record_size);
}

inline std::vector<std::uint8_t> encode(const Config& config, const std::vector<Op>& ops) {
  std::vector<std::uint8_t> out;
  out.push_back(static_cast<std::uint8_t>(
      (config.reentrant ? kReentrant : 0) | (config.suspended ? kSuspended : 0) |
      (config.observe ? kObserve : 0) | (config.services ? kServices : 0) |
      (config.forms ? kForms : 0) | (config.nested ? kNested : 0)));
  for (const Op& op : ops) {
    const std::size_t nested = op.nested ? std::min<std::size_t>(op.nested->size(), 3) : 0;
    encode_op(op, static_cast<int>(nested), out);
    for (std::size_t i = 0; i < nested; ++i) encode_op((*op.nested)[i], 0, out);
  }
  return out;
}

// ---- one input ----------------------------------------------------------------------------------

inline int run_one(const std::uint8_t* data, std::size_t size) {
  const auto [config, ops] = decode(data, size);
  if (auto failure = run_sequence(ops, config, /*seed of the final releases*/ size)) {
    std::fprintf(
        stderr,
        "hookset fuzz: mismatch with the model after operation %zu of %zu: %s\n"
        "  config: reentrant=%d suspended=%d observe=%d services=%d forms=%d nested=%d\n"
        "  (set~n: pool pick n modulo the pool size; hook~n: pick among the set's live hooks)\n%s",
        failure->index, ops.size(), failure->message.c_str(), config.reentrant, config.suspended,
        config.observe, config.services, config.forms, config.nested,
        describe(std::vector<Op>(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                                ops.size(), failure->index + 1))),
                 "    ")
            .c_str());
    std::fflush(stderr);
    std::abort();
  }
  return 0;
}

}  // namespace hookset_fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return hookset_fuzz::run_one(data, size);
}

#if defined(HOOKSET_FUZZ_REPLAY)

namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes `count` seeds: random sequences (4 to 80 operations) of the model tests' generator under
// every configuration, encoded. Deterministic: the same files every time.
// `keyed`: the seeds keyed-NNN instead, most of whose adds and calls are on keyed slots.
int write_seeds(const fs::path& dir, int count, bool keyed) {
  using namespace hookset_model;
  fs::create_directories(dir);
  Random r(keyed ? 20261125 : 20261124);
  for (int n = 0; n < count; ++n) {
    Config config;
    config.keyed_focus = keyed;
    config.reentrant = (n & 1) != 0;
    config.suspended = (n & 2) != 0;
    config.observe = (n & 4) != 0;
    config.services = (n & 8) != 0;
    config.forms = (n & 16) != 0;
    config.nested = (n & 32) != 0;
    if (config.suspended) config.reentrant = true;  // as the model tests run it
    const std::vector<Op> ops = random_sequence(r, config, r.between(4, 80));
    const std::vector<std::uint8_t> bytes = hookset_fuzz::encode(config, ops);
    char name[32];
    std::snprintf(name, sizeof name, keyed ? "keyed-%03d" : "seed-%03d", n);
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  std::printf("wrote %d seeds to %s\n", count, dir.string().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--write-seeds")
    return write_seeds(argv[2], std::atoi(argv[3]), false);
  if (argc == 4 && std::string(argv[1]) == "--write-keyed-seeds")
    return write_seeds(argv[2], std::atoi(argv[3]), true);
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s <file or directory>... | --write-seeds <dir> <count> | "
                 "--write-keyed-seeds <dir> <count>\n",
                 argv[0]);
    return 2;
  }
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::recursive_directory_iterator(argv[i]))
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.')
          files.push_back(entry.path());
    } else {
      files.emplace_back(argv[i]);
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const std::vector<std::uint8_t> bytes = read_bytes(file);
      std::printf("replaying %s (%zu bytes)\n", file.string().c_str(), bytes.size());
      std::fflush(stdout);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++inputs;
    }
  }
  std::printf("%zu inputs replayed, each matched the model\n", inputs);
  return 0;
}

#endif
