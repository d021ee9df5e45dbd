#pragma once
// Names and addresses as the service judges them: a URL parsed (RFC 3986, Boost.URL) and its host
// made canonical before any guard sees it, so that a guard judges what will be fetched, not what
// was typed ("EVIL.example", "evil%2Eexample", "evil．example" and "2130706433" are one host
// each: evil.example, evil.example, evil.example, 127.0.0.1). The HTTP server reads its Host and
// Origin headers with the same functions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

enum class HostKind { name, ipv4, ipv6 };

// A host in one spelling only. A name: lower-case ASCII letters, digits, hyphens and
// underscores in dot-separated labels, no trailing dot (percent-encoding decoded, the IDNA dots
// U+3002, U+FF0E, U+FF61 and the full-width forms of ASCII mapped to ASCII as UTS #46 does; any
// other non-ASCII character is refused, there being no IDNA here to turn it into an A-label). An
// IPv4 address: dotted decimal, also when written as a number ("2130706433", "0x7f.1", "127.1":
// what inet_aton and a browser make of them). An IPv6 address: its RFC 5952 text in brackets.
struct Host {
  HostKind kind = HostKind::name;
  std::string text;
  bool operator==(const Host&) const = default;
};

// A URL as a tool will fetch it: http or https, no credentials, the host canonical, the port
// explicit or the scheme's, the path with its dot segments resolved, no fragment (never sent).
struct WebAddress {
  std::string scheme;  // "http" or "https"
  Host host;
  std::uint16_t port = 0;
  std::string target;  // path and query, as sent: "/a/c?q=1"
  std::string text;    // the whole, canonical: "https://docs.example/a/c?q=1"
};

// `text` as a WebAddress, or nothing with `why` saying what is wrong with it.
std::optional<WebAddress> parse_web_address(std::string_view text, std::string& why);

// A Host header's value, or an absolute-form request target's authority (RFC 9110 7.2):
// host [":" port], no userinfo. The port is absent when not given (or given empty).
struct Authority {
  Host host;
  std::optional<std::uint16_t> port;
};
std::optional<Authority> parse_authority(std::string_view text, std::string& why);

// An Origin header's value (RFC 6454): "null", or scheme "://" host [":" port] and nothing more.
struct Origin {
  std::string scheme;
  Host host;
  std::uint16_t port = 0;  // given or the scheme's
  bool operator==(const Origin&) const = default;
};
std::optional<Origin> parse_origin(std::string_view text, std::string& why);

// The machine the service runs on, or a network it would reach without the internet: localhost
// names, loopback, private (RFC 1918, unique local), link-local (169.254/16: cloud metadata),
// carrier-grade NAT, unspecified. (Decided from the host as written: a public name that resolves
// to such an address is the fetcher's to refuse, connecting.)
bool is_own_network(const Host& host);
