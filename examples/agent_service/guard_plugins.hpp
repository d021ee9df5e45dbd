#pragma once
// The agent service's guard plugins: every plugin library (*.so) of a directory (--plugins),
// loaded at start-up into the service's hookset::PluginHost and reloaded while it serves:
//
//   POST /admin/reload                                   every plugin from its file (a new build
//                                                        installed over it), and the files new in
//                                                        the directory; plugins whose file is gone
//                                                        are unloaded
//   POST /admin/plugins/<name>/reload[?build=<build>]    one plugin, from its file or from
//                                                        builds/<name>-<build>.so
//
// A plugin is named after its file (url_reputation.so: "url_reputation"), which may be a
// symbolic link to one of its builds in builds/ ("builds/url_reputation-v1.so": build "v1").
// A reload swaps the plugin's hooks at once (each call sees the old guard or the new one); the
// old library is closed once the calls running it have ended. A build the host refuses
// (hookset::PluginError: not a plugin, built against another set, its entry point threw) leaves
// the one in service as it was, and the answer says why (422).
#include "slots.hpp"

#include <boost/beast/http/status.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

class GuardPlugins {
 public:
  // An admin request's answer.
  struct Answer {
    boost::beast::http::status status;
    json::object body;
  };

  GuardPlugins(ServiceHost& host, std::filesystem::path directory);
  GuardPlugins(const GuardPlugins&) = delete;
  GuardPlugins& operator=(const GuardPlugins&) = delete;

  // Loads every plugin of the directory, in the order of their names. Throws PluginError for
  // the first the host refuses (a guard missing is not a way to start), std::runtime_error when
  // the directory cannot be read.
  void load_all();
  // POST /admin/reload.
  Answer reload_all();
  // POST /admin/plugins/<name>/reload?build=<build> (`build` empty: from its own file).
  Answer reload(std::string_view name, std::string_view build);
  // The plugins in service - each one's name, build, the file it was loaded from - the reloads
  // made and refused, and the old builds still open (for GET /metrics and the admin answers).
  json::object describe() const;
  // The same in Prometheus' text format: agent_plugin_info{name,build}, the reloads made and
  // refused, the old builds still open.
  std::string to_prometheus() const;

 private:
  struct Entry {
    hookset::Plugin plugin;
    std::filesystem::path file;         // its file in the directory
    std::filesystem::path loaded_from;  // the build in service: `file`, or one of builds/
    std::uint64_t reloads = 0;
  };
  json::object describe_locked() const;
  json::object entry_json(const std::string& name, const Entry& entry) const;
  // Reloads `entry` from `build`: its description, or its refusal (PluginError::what) in
  // `errors`.
  bool reload_locked(const std::string& name, Entry& entry, const std::filesystem::path& build,
                     json::array& reloaded, json::array& errors);
  // The old builds whose libraries are closed by now, counted and let go of.
  void sweep_locked() const;

  ServiceHost& host_;
  const std::filesystem::path directory_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> plugins_;
  mutable std::vector<hookset::Unloaded> closing_;  // old builds not closed yet
  mutable std::uint64_t closed_ = 0;
  mutable std::uint64_t resident_ = 0;    // closed, but the dynamic linker kept them mapped
  mutable std::uint64_t in_service_ = 0;  // closed, their library in service for the same build
  std::uint64_t reloads_ = 0;
  std::uint64_t refused_ = 0;
};
