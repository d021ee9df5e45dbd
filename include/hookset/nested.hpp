#pragma once
// hookset::Nested<Name, Set>: a HookSet listed among another set's members under a name, so that
// one set type can be nested more than once (a plugin host with a primary and a backup toolset):
//
//   struct PrimaryTools;  // any type names a member; it need not be complete
//   struct BackupTools;
//   hookset::HookSet<hookset::Nested<PrimaryTools, Tools>, hookset::Nested<BackupTools, Tools>,
//                    Audit> host;
//   host.nested<PrimaryTools>().add<RunTool>(local_runner);
//
// A slot that two nested members have is reached through set.nested<Name>() (through the outer
// set it is ambiguous: a compile error); whole-set operations (add_hooks, intercept_all, clear,
// remove, holds, extend) visit every member, both copies included.

namespace hookset {

// Only a name: the member is stored as a Set. (Complete and empty, so that the traits that
// sort a set's members may ask any question of it; Name itself may stay incomplete.)
template <class Name, class Set>
struct Nested {};

}  // namespace hookset
