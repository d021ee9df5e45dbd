// EXPECT: hookset: the slot asks for its values in observer events \(trace_values\)
// EXPECT: Ticket
// EXPECT: AuditTicket
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Ticket {
  int id = 0;
};  // no hookset_format, no hookset::value_format<Ticket>
struct AuditTicket : hookset::Slot<Ticket(int), hookset::Always> {
  static constexpr bool trace_values = true;
  static Ticket default_impl(int id) { return {id}; }
};
int main() { hookset::HookSet<AuditTicket> set; (void)set; }
