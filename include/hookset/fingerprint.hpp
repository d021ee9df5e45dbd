#pragma once
// What a program and a library built apart from it (a plugin) check before one registers hooks
// in the other's HookSet: that they mean the same slots. Not type_info: a library's type_info
// objects need not compare equal to the program's, and comparing them cannot say which slot
// differs. A slot's identity is its name and its shape, fixed at compile time:
//
//   slot_shape<S>        the slot's declaration as the compiler spells it,
//                        "hookset::Slot<int(std::string_view), hookset::Always>": its signature,
//                        its mode and its companions and options;
//   slot_fingerprint<S>  a 64-bit hash of slot_name<S>, slot_shape<S> and the sizes and
//                        alignments of the types the slot passes;
//   set_manifest<Set>    every slot of a set (nested sets' too), in order, with this hookset's
//                        binary interface version and the toolchain, as plain data that can
//                        cross a library boundary;
//   manifest_mismatch    why one manifest's set cannot stand for another's (empty when it can),
//                        naming the first slot that differs.
//
// The compiler's spelling makes the shape exact but the compiler's own: a library built by
// another compiler, or against another standard library, is refused by its toolchain before
// any slot is compared, which is what a C++ plugin needs anyway (std::string, std::function and
// hookset's own types are laid out by the standard library).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/detail/type_name.hpp>
#include <hookset/hook_set.hpp>
#include <hookset/slot.hpp>

namespace hookset {

// The version of the binary interface between hookset code built apart (a program and its
// plugins): the layouts and the meaning of what crosses between them. It changes whenever they
// change; a library built against another version is refused.
inline constexpr std::uint32_t abi_version = 2;

namespace detail {

// FNV-1a, 64 bits: small, constexpr, and the same on every platform.
struct fingerprint_hash {
  std::uint64_t value = 14695981039346656037ull;
  constexpr fingerprint_hash& add(std::string_view text) noexcept {
    for (const char c : text) {
      value ^= static_cast<unsigned char>(c);
      value *= 1099511628211ull;
    }
    return *this;
  }
  constexpr fingerprint_hash& add(std::uint64_t number) noexcept {
    for (int byte = 0; byte != 8; ++byte) {
      value ^= (number >> (8 * byte)) & 0xffu;
      value *= 1099511628211ull;
    }
    return *this;
  }
};

// The Slot<R(Args...), Options...> a slot type derives from.
template <class R, class... Args, class... Options>
Slot<R(Args...), Options...> declared_slot(const Slot<R(Args...), Options...>*);

// The compiler and the standard library, as they decide how types are spelled and laid out.
inline constexpr std::string_view toolchain_name =
#if defined(__clang__)
    "clang"
#elif defined(__GNUC__)
    "gcc"
#elif defined(_MSC_VER)
    "msvc"
#else
    "other"
#endif
#if defined(_LIBCPP_VERSION)
    "/libc++"
#elif defined(__GLIBCXX__)
#if defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI == 0
    "/libstdc++ (old string ABI)"
#else
    "/libstdc++"
#endif
#elif defined(_MSVC_STL_VERSION)
    "/msvc-stl"
#else
    "/other"
#endif
    ;

}  // namespace detail

// The slot's declaration as the compiler spells it: the Slot<Signature, Mode, Options...> it
// derives from.
template <class S>
inline constexpr std::string_view slot_shape =
    detail::type_name<decltype(detail::declared_slot(static_cast<const S*>(nullptr)))>;

namespace detail {

// How a type the slot passes is laid out, as far as the compiler tells without naming members:
// its size and alignment (0 for void; a reference or a const type as what it refers to). A
// type that keeps its name but changes its definition usually changes these.
template <class T>
constexpr std::uint64_t layout_of() noexcept {
  using plain = std::remove_cvref_t<T>;
  if constexpr (std::is_void_v<plain>) return 0;
  else return std::uint64_t{sizeof(plain)} << 16 | alignof(plain);
}
template <class R, class... Args, class... Options>
constexpr std::uint64_t layout_hash(const Slot<R(Args...), Options...>*) noexcept {
  fingerprint_hash hash;
  hash.add(layout_of<R>());
  (hash.add(layout_of<Args>()), ...);
  return hash.value;
}

}  // namespace detail

// The slot's identity across a library boundary: a hash of its name, its shape and the layout
// of its result and parameters. Two slots have the same fingerprint when they have the same
// name, are declared alike and pass types of the same sizes.
template <class S>
inline constexpr std::uint64_t slot_fingerprint =
    detail::fingerprint_hash{}
        .add(slot_name<S>)
        .add(std::string_view("\n"))
        .add(slot_shape<S>)
        .add(detail::layout_hash(static_cast<const S*>(nullptr)))
        .value;

// One slot of a manifest. (Pointers and sizes rather than std::string_view: the first thing
// compared is whether both sides lay out standard types alike.)
struct SlotManifest {
  const char* name;
  std::size_t name_size;
  const char* shape;
  std::size_t shape_size;
  std::uint64_t fingerprint;

  std::string_view name_view() const noexcept { return {name, name_size}; }
  std::string_view shape_view() const noexcept { return {shape, shape_size}; }
};

// A set as a library sees it: what manifest_mismatch compares. The first two members keep their
// place in every version, so that a manifest of another version can still be told apart.
struct SetManifest {
  std::uint32_t abi_version;
  const char* toolchain;      // null-terminated
  std::uint64_t fingerprint;  // of the ABI, the toolchain and every slot, in order
  std::size_t slot_count;
  const SlotManifest* slots;
};

namespace detail {

// A manifest's data has internal linkage (`static`): each library holds its own. An inline
// variable would be one object for the whole process - GCC marks such variables unique
// (STB_GNU_UNIQUE), and the dynamic linker binds every library's references to the first copy
// loaded, even for a library opened RTLD_LOCAL - so a library's manifest would be the
// program's, which always agrees.
template <class... S>
constexpr std::uint64_t set_fingerprint(mp::mp_list<S...>) noexcept {
  fingerprint_hash hash;
  hash.add(std::uint64_t{abi_version}).add(toolchain_name).add(std::uint64_t{sizeof...(S)});
  (hash.add(slot_fingerprint<S>), ...);
  return hash.value;
}
template <class... S>
constexpr std::array<SlotManifest, sizeof...(S)> slot_manifests(mp::mp_list<S...>) noexcept {
  return {{{slot_name<S>.data(), slot_name<S>.size(), slot_shape<S>.data(), slot_shape<S>.size(),
            slot_fingerprint<S>}...}};
}
template <class Set>
static constexpr auto manifest_slots = slot_manifests(typename Set::slots{});

}  // namespace detail

// The manifest of a HookSet type: this program's (or this library's) view of it, which a
// library that registers in such a set hands over. Each library has its own copy (see above);
// it lives as long as the library.
template <class Set>
static constexpr SetManifest set_manifest{
    abi_version, detail::toolchain_name.data(), detail::set_fingerprint(typename Set::slots{}),
    detail::manifest_slots<Set>.size(), detail::manifest_slots<Set>.data()};

// Why the set described by `library` cannot be used as the one described by `program` - the
// first difference found, naming the slot - or an empty string when it can: the same binary
// interface version, the same toolchain, and the same slots, declared alike, in the same order.
inline std::string manifest_mismatch(const SetManifest& program, const SetManifest& library) {
  using std::string_view;
  if (library.abi_version != program.abi_version)
    return "the library was built against hookset's binary interface version " +
           std::to_string(library.abi_version) + ", this program against version " +
           std::to_string(program.abi_version);
  if (string_view(library.toolchain) != string_view(program.toolchain))
    return "the library was built with " + std::string(library.toolchain) + ", this program with " +
           std::string(program.toolchain) +
           ": they may spell and lay out the same types differently";
  if (library.fingerprint == program.fingerprint) return {};
  auto find = [](const SetManifest& manifest, string_view name) -> const SlotManifest* {
    for (std::size_t i = 0; i != manifest.slot_count; ++i)
      if (manifest.slots[i].name_view() == name) return &manifest.slots[i];
    return nullptr;
  };
  for (std::size_t i = 0; i != program.slot_count; ++i) {
    const SlotManifest& mine = program.slots[i];
    const SlotManifest* theirs = find(library, mine.name_view());
    if (!theirs)
      return "slot '" + std::string(mine.name_view()) +
             "' of this program's set is not in the library's";
    if (theirs->fingerprint != mine.fingerprint && theirs->shape_view() == mine.shape_view())
      return "slot '" + std::string(mine.name_view()) +
             "' is declared alike, but a type it passes has another size or alignment in the "
             "library (" +
             std::string(mine.shape_view()) + "): its definition changed";
    if (theirs->fingerprint != mine.fingerprint)
      return "slot '" + std::string(mine.name_view()) +
             "' is declared differently: " + std::string(mine.shape_view()) + " in this program, " +
             std::string(theirs->shape_view()) + " in the library";
  }
  for (std::size_t i = 0; i != library.slot_count; ++i)
    if (!find(program, library.slots[i].name_view()))
      return "slot '" + std::string(library.slots[i].name_view()) +
             "' of the library's set is not in this program's";
  // (The same names, but not as many: a set nested more than once, under names, in one of them.
  // Checked before the positions are compared, which reads both lists up to program's count.)
  if (program.slot_count != library.slot_count)
    return "this program's set has " + std::to_string(program.slot_count) +
           " slots, the library's " + std::to_string(library.slot_count) +
           ": some slot occurs more often in one (a set nested more than once)";
  for (std::size_t i = 0; i != program.slot_count; ++i)
    if (program.slots[i].fingerprint != library.slots[i].fingerprint)
      return "the sets list the same slots in another order: slot '" +
             std::string(program.slots[i].name_view()) + "' is at position " + std::to_string(i) +
             " in this program's set, not in the library's";
  // (Every slot agrees with the one of its name, in order: two slots of a set share a name.)
  return "the sets differ in slots that share a name";
}

}  // namespace hookset
