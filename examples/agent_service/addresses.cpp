#include "addresses.hpp"

#include <boost/url.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace urls = boost::urls;

namespace {

// The code point of the UTF-8 sequence at `at` (moving past it), or nothing if it is ill-formed.
std::optional<char32_t> next_code_point(std::string_view text, std::size_t& at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const std::size_t length = lead < 0x80                    ? 1
                             : lead >= 0xC2 && lead <= 0xDF ? 2
                             : lead >= 0xE0 && lead <= 0xEF ? 3
                             : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) return std::nullopt;
  char32_t code = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[at + i]);
    if ((byte & 0xC0) != 0x80) return std::nullopt;
    code = (code << 6) | (byte & 0x3F);
  }
  static constexpr char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return std::nullopt;  // overlong, past Unicode, a surrogate
  at += length;
  return code;
}

std::vector<std::string_view> labels_of(std::string_view name) {
  std::vector<std::string_view> labels;
  for (std::size_t start = 0;;) {
    const std::size_t dot = name.find('.', start);
    labels.push_back(name.substr(start, dot - start));
    if (dot == std::string_view::npos) return labels;
    start = dot + 1;
  }
}

// A label that inet_aton (and the WHATWG URL parser) reads as a number: decimal, or 0x hex.
bool numeric_label(std::string_view label) {
  std::string_view digits = label;
  const bool hex = label.starts_with("0x");
  if (hex) digits.remove_prefix(2);
  for (const char c : digits)
    if (!(c >= '0' && c <= '9') && !(hex && ((c >= 'a' && c <= 'f')))) return false;
  return hex || !digits.empty();
}

// An IPv4 address written as inet_aton reads it (one to four numbers, each decimal, 0x hex or
// 0 octal, the last filling the bytes left), in dotted decimal; nothing if it is none.
std::optional<std::string> ipv4_of_numbers(const std::vector<std::string_view>& parts) {
  if (parts.empty() || parts.size() > 4) return std::nullopt;
  std::uint64_t address = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string_view digits = parts[i];
    unsigned base = 10;
    if (digits.starts_with("0x")) {
      base = 16;
      digits.remove_prefix(2);
    } else if (digits.size() > 1 && digits.front() == '0') {
      base = 8;
      digits.remove_prefix(1);
    }
    std::uint64_t value = 0;
    for (const char c : digits) {
      const unsigned digit = c >= '0' && c <= '9'   ? static_cast<unsigned>(c - '0')
                             : c >= 'a' && c <= 'f' ? static_cast<unsigned>(c - 'a' + 10)
                                                    : 16;
      if (digit >= base) return std::nullopt;
      value = value * base + digit;
      if (value > 0xFFFFFFFF) return std::nullopt;
    }
    const bool last = i + 1 == parts.size();
    const std::uint64_t limit = last ? std::uint64_t{1} << (8 * (5 - parts.size())) : 256;
    if (value >= limit) return std::nullopt;
    address = last ? address | value : address | (value << (8 * (3 - i)));
  }
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xFF) + "." +
         std::to_string((address >> 8) & 0xFF) + "." + std::to_string(address & 0xFF);
}

// A reg-name, percent-decoded, as a canonical Host (see addresses.hpp).
std::optional<Host> canonical_name(std::string_view decoded, std::string& why) {
  std::string name;
  for (std::size_t at = 0; at < decoded.size();) {
    std::optional<char32_t> code = next_code_point(decoded, at);
    if (!code) {
      why = "the host name is not UTF-8";
      return std::nullopt;
    }
    char32_t c = *code;
    if (c == 0x3002 || c == 0xFF0E || c == 0xFF61) c = '.';  // the IDNA dots
    if (c >= 0xFF01 && c <= 0xFF5E) c = c - 0xFF01 + 0x21;   // full-width ASCII
    if (c >= 'A' && c <= 'Z') c = c - 'A' + 'a';
    const bool allowed =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!allowed) {
      why = c >= 0x80 ? "the host name has characters other than ASCII (internationalised names "
                        "are not supported)"
                      : "the host name has a character no host name has";
      return std::nullopt;
    }
    name += static_cast<char>(c);
  }
  if (name.ends_with('.')) name.pop_back();  // the root: "evil.example." is evil.example
  if (name.empty() || name.size() > 253) {
    why = name.empty() ? "the host is empty" : "the host name is longer than 253 bytes";
    return std::nullopt;
  }
  const std::vector<std::string_view> labels = labels_of(name);
  for (const std::string_view label : labels)
    if (label.empty() || label.size() > 63) {
      why = "the host name has an empty label or one longer than 63 bytes";
      return std::nullopt;
    }
  if (numeric_label(labels.back())) {
    std::optional<std::string> address = ipv4_of_numbers(labels);
    if (!address) {
      why = "the host ends in a number but is no IPv4 address";
      return std::nullopt;
    }
    return Host{HostKind::ipv4, *address};
  }
  return Host{HostKind::name, name};
}

// The host of a URL or an authority, canonical.
template <class View>
std::optional<Host> host_of(const View& view, std::string& why) {
  switch (view.host_type()) {
    case urls::host_type::ipv4:
      return Host{HostKind::ipv4, std::string(view.encoded_host())};
    case urls::host_type::ipv6:
      return Host{HostKind::ipv6, "[" + view.host_ipv6_address().to_string() + "]"};
    case urls::host_type::name:
      return canonical_name(view.host_name(), why);
    default:
      why = "the host is neither a name nor an IP address";
      return std::nullopt;
  }
}

// A port as written ("" when given empty): nothing when absent or empty, false when invalid.
bool port_of(std::string_view text, std::optional<std::uint16_t>& port, std::string& why) {
  port.reset();
  if (text.empty()) return true;
  const bool digits = text.size() <= 5 && text.find_first_not_of("0123456789") == text.npos;
  const unsigned long value = digits ? std::stoul(std::string(text)) : 0;
  if (!digits || value > 65535) {
    why = "the port is not a number from 0 to 65535";
    return false;
  }
  port = static_cast<std::uint16_t>(value);
  return true;
}

std::uint16_t default_port(std::string_view scheme) {
  return scheme == "http" ? 80 : scheme == "https" ? 443 : 0;
}

// Bytes outside ASCII percent-encoded, as a browser sends an IRI: "evil．example" reaches the
// parser as "evil%EF%BC%8Eexample", and its host is decoded and mapped like any other.
std::string ascii_only(std::string_view text) {
  std::string ascii;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80) {
      ascii += c;
      continue;
    }
    constexpr std::string_view hex = "0123456789ABCDEF";
    ascii.append(1, '%').append(1, hex[byte >> 4]).append(1, hex[byte & 0xF]);
  }
  return ascii;
}

}  // namespace

std::optional<WebAddress> parse_web_address(std::string_view text, std::string& why) {
  const std::string ascii = ascii_only(text);
  auto parsed = urls::parse_uri(ascii);
  if (!parsed) {
    why = "not a URL (" + parsed.error().message() + ")";
    return std::nullopt;
  }
  urls::url url(*parsed);
  url.normalize();  // scheme and host case, percent-encoding, dot segments
  WebAddress address;
  address.scheme = url.scheme();
  if (address.scheme != "http" && address.scheme != "https") {
    why = "the scheme is not http or https";
    return std::nullopt;
  }
  if (!url.has_authority() || url.has_userinfo()) {
    why = url.has_userinfo() ? "credentials in a URL are not accepted" : "the URL has no host";
    return std::nullopt;
  }
  std::optional<Host> host = host_of(*parsed, why);
  if (!host) return std::nullopt;
  address.host = std::move(*host);
  std::optional<std::uint16_t> port;
  if (!port_of(url.port(), port, why)) return std::nullopt;
  address.port = port.value_or(default_port(address.scheme));
  address.target = url.encoded_path().empty() ? "/" : std::string(url.encoded_path());
  if (url.has_query()) address.target.append("?").append(url.encoded_query());
  address.text = address.scheme + "://" + address.host.text;
  if (address.port != default_port(address.scheme))
    address.text.append(":").append(std::to_string(address.port));
  address.text += address.target;
  // The text the tool fetches must say what the guards judged, read by any parser: Boost.URL
  // 1.81 reads "https://h:1a/" as port 1 and path "a/" (a path after an authority starts with
  // '/'), and "https://h:-1/" as an empty port and path "-1/", which written out again is the
  // host "h-1". Such a URL is refused, and the text read back must give the same parts.
  auto again = urls::parse_uri(address.text);
  if (!address.target.starts_with('/') || !again || again->encoded_host() != address.host.text ||
      again->port_number() != (address.port == default_port(address.scheme) ? 0 : address.port) ||
      again->encoded_resource() != address.target) {
    why = "not a URL (its parts read differently once written out)";
    return std::nullopt;
  }
  return address;
}

std::optional<Authority> parse_authority(std::string_view text, std::string& why) {
  if (text.empty()) {
    why = "the host is empty";
    return std::nullopt;
  }
  auto parsed = urls::parse_authority(text);
  if (!parsed || parsed->has_userinfo()) {
    why = parsed ? "credentials in a host" : "not a host[:port] (" + parsed.error().message() + ")";
    return std::nullopt;
  }
  std::optional<Host> host = host_of(*parsed, why);
  if (!host) return std::nullopt;
  Authority authority{std::move(*host), std::nullopt};
  if (!port_of(parsed->port(), authority.port, why)) return std::nullopt;
  return authority;
}

std::optional<Origin> parse_origin(std::string_view text, std::string& why) {
  auto parsed = urls::parse_absolute_uri(text);
  if (!parsed || !parsed->has_authority() || parsed->has_userinfo() || parsed->has_query() ||
      !parsed->encoded_path().empty()) {
    why = text == "null" ? "an opaque origin (null)" : "not an origin (scheme://host[:port])";
    return std::nullopt;
  }
  Origin origin;
  origin.scheme = parsed->scheme();
  for (char& c : origin.scheme) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  std::optional<Host> host = host_of(*parsed, why);
  if (!host) return std::nullopt;
  origin.host = std::move(*host);
  std::optional<std::uint16_t> port;
  if (!port_of(parsed->port(), port, why)) return std::nullopt;
  origin.port = port.value_or(default_port(origin.scheme));
  return origin;
}

bool is_own_network(const Host& host) {
  switch (host.kind) {
    case HostKind::name:
      return host.text == "localhost" || host.text.ends_with(".localhost");  // RFC 6761
    case HostKind::ipv4: {
      auto parsed = urls::parse_ipv4_address(host.text);
      if (!parsed) return true;  // (cannot happen: canonical) refused rather than let through
      const auto b = parsed->to_bytes();
      return b[0] == 0 || b[0] == 10 || b[0] == 127 || (b[0] == 169 && b[1] == 254) ||
             (b[0] == 172 && (b[1] & 0xF0) == 16) || (b[0] == 192 && b[1] == 168) ||
             (b[0] == 100 && (b[1] & 0xC0) == 64);
    }
    case HostKind::ipv6: {
      auto parsed =
          urls::parse_ipv6_address(std::string_view(host.text).substr(1, host.text.size() - 2));
      if (!parsed) return true;
      const auto b = parsed->to_bytes();
      if (parsed->is_v4_mapped())
        return is_own_network(
            Host{HostKind::ipv4, std::to_string(b[12]) + "." + std::to_string(b[13]) + "." +
                                     std::to_string(b[14]) + "." + std::to_string(b[15])});
      bool zero_but_last = true;
      for (std::size_t i = 0; i < 15; ++i) zero_but_last = zero_but_last && b[i] == 0;
      return (zero_but_last && b[15] <= 1) ||          // :: and ::1
             (b[0] & 0xFE) == 0xFC ||                  // fc00::/7, unique local
             (b[0] == 0xFE && (b[1] & 0xC0) == 0x80);  // fe80::/10, link-local
    }
  }
  return true;
}
