#pragma once
// Attributed<R>: an output with the registration that produced it. An Aggregate companion may
// take std::vector<Attributed<R>> instead of std::vector<R> (docs/semantics.md, "Companions").

#include <string>

#include <hookset/hook_id.hpp>

namespace hookset {

template <class R>
struct Attributed {
  R value;
  HookId hook;       // the registration that produced it; empty for the slot's default
  std::string name;  // its name (HookOptions::name), a copy: valid after the hook is removed
};

}  // namespace hookset
