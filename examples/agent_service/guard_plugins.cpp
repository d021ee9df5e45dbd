#include "guard_plugins.hpp"

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace fs = std::filesystem;
using boost::beast::http::status;

namespace {

// A plugin's or a build's name as a request may give it: letters, digits, '_', '-' and '.' (no
// '/': a name never leads out of the directory), not starting with '.'.
bool plain_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
         });
}

// The build a file holds: "v2" for builds/url_reputation-v2.so, or the build a symbolic link
// (url_reputation.so) points at; its file name when it names none.
std::string build_of(const std::string& name, const fs::path& file) {
  std::error_code error;
  const fs::path target = fs::canonical(file, error);
  const std::string stem = (error ? file : target).stem().string();
  if (stem.size() > name.size() + 1 && stem.starts_with(name + "-"))
    return stem.substr(name.size() + 1);
  return (error ? file : target).filename().string();
}

// The plugin libraries of `directory` (its *.so files, links included), by name.
std::map<std::string, fs::path> plugin_files(const fs::path& directory) {
  std::map<std::string, fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory))
    if (entry.path().extension() == ".so" && entry.is_regular_file())  // (follows a link)
      files.emplace(entry.path().stem().string(), entry.path());
  return files;
}

}  // namespace

GuardPlugins::GuardPlugins(ServiceHost& host, fs::path directory)
    : host_(host), directory_(std::move(directory)) {}

void GuardPlugins::load_all() {
  std::lock_guard lock(mutex_);
  for (auto& [name, file] : plugin_files(directory_)) {
    hookset::Plugin plugin = host_.load(file);
    plugins_.insert_or_assign(name, Entry{std::move(plugin), file, file});
  }
}

bool GuardPlugins::reload_locked(const std::string& name, Entry& entry, const fs::path& build,
                                 json::array& reloaded, json::array& errors) {
  try {
    closing_.push_back(host_.reload(entry.plugin, build));
  } catch (const hookset::PluginError& error) {
    ++refused_;
    errors.push_back(json::object{{"name", name},
                                  {"build", build_of(name, build)},
                                  {"path", build.string()},
                                  {"error", error.what()}});
    return false;
  }
  ++reloads_;
  ++entry.reloads;
  entry.loaded_from = build;
  reloaded.push_back(entry_json(name, entry));
  return true;
}

GuardPlugins::Answer GuardPlugins::reload_all() {
  std::lock_guard lock(mutex_);
  json::array reloaded, loaded, unloaded, errors;
  std::map<std::string, fs::path> files;
  try {
    files = plugin_files(directory_);
  } catch (const fs::filesystem_error& error) {
    return {status::internal_server_error,
            {{"error", std::string("cannot read the plugin directory: ") + error.what()}}};
  }
  for (auto it = plugins_.begin(); it != plugins_.end();) {
    auto& [name, entry] = *it;
    if (!files.contains(name)) {  // its file is gone: so is the plugin
      closing_.push_back(host_.unload(entry.plugin));
      unloaded.push_back(json::object{{"name", name}, {"path", entry.file.string()}});
      it = plugins_.erase(it);
      continue;
    }
    reload_locked(name, entry, entry.file, reloaded, errors);
    ++it;
  }
  for (auto& [name, file] : files) {
    if (plugins_.contains(name)) continue;
    try {
      hookset::Plugin plugin = host_.load(file);
      const auto added = plugins_.insert_or_assign(name, Entry{std::move(plugin), file, file});
      loaded.push_back(entry_json(name, added.first->second));
    } catch (const hookset::PluginError& error) {
      ++refused_;
      errors.push_back(json::object{{"name", name},
                                    {"build", build_of(name, file)},
                                    {"path", file.string()},
                                    {"error", error.what()}});
    }
  }
  json::object body = describe_locked();
  body["reloaded"] = std::move(reloaded);
  body["loaded"] = std::move(loaded);
  body["unloaded"] = std::move(unloaded);
  if (!errors.empty()) body["errors"] = std::move(errors);
  return {body.contains("errors") ? status::unprocessable_entity : status::ok, std::move(body)};
}

GuardPlugins::Answer GuardPlugins::reload(std::string_view name, std::string_view build) {
  std::lock_guard lock(mutex_);
  const auto found = plain_name(name) ? plugins_.find(name) : plugins_.end();
  if (found == plugins_.end()) {
    json::object body = describe_locked();
    body["error"] = plain_name(name) ? "no plugin named " + std::string(name)
                                     : std::string("no plugin by that name");
    return {status::not_found, std::move(body)};
  }
  fs::path file = found->second.file;
  if (!build.empty()) {
    if (!plain_name(build))
      return {status::bad_request,
              {{"error", "a build is named with letters, digits, '_', '-' and '.'"}}};
    file = directory_ / "builds" / (found->first + "-" + std::string(build) + ".so");
    std::error_code error;
    if (!fs::exists(file, error)) {
      json::object body = describe_locked();
      body["error"] =
          "no build " + std::string(build) + " of " + found->first + " (" + file.string() + ")";
      return {status::not_found, std::move(body)};
    }
  }
  json::array reloaded, errors;
  const bool done = reload_locked(found->first, found->second, file, reloaded, errors);
  json::object body = describe_locked();
  body["reloaded"] = std::move(reloaded);
  if (!done) {
    // The refusal, in the host's words; the build in service stays (listed in "plugins").
    body["error"] = errors[0].as_object()["error"];
    body["refused"] = std::move(errors[0]);
  }
  return {done ? status::ok : status::unprocessable_entity, std::move(body)};
}

json::object GuardPlugins::describe() const {
  std::lock_guard lock(mutex_);
  return describe_locked();
}

std::string GuardPlugins::to_prometheus() const {
  std::lock_guard lock(mutex_);
  sweep_locked();
  // A label value with '\\', '"' and newlines escaped (a file may be named with any of them).
  const auto label = [](std::string_view value) {
    std::string escaped;
    for (const char c : value) {
      if (c == '\\' || c == '"') escaped += '\\';
      if (c == '\n') escaped += "\\n";
      else escaped += c;
    }
    return escaped;
  };
  std::string text =
      "# HELP agent_plugin_info The guard plugins in service, by name and build.\n"
      "# TYPE agent_plugin_info gauge\n";
  for (const auto& [name, entry] : plugins_)
    text += "agent_plugin_info{name=\"" + label(name) + "\",build=\"" +
            label(build_of(name, entry.loaded_from)) + "\"} 1\n";
  text +=
      "# HELP agent_plugin_reloads_total Plugin reloads made.\n"
      "# TYPE agent_plugin_reloads_total counter\n"
      "agent_plugin_reloads_total " +
      std::to_string(reloads_) +
      "\n"
      "# HELP agent_plugin_refused_total Plugin builds the host refused.\n"
      "# TYPE agent_plugin_refused_total counter\n"
      "agent_plugin_refused_total " +
      std::to_string(refused_) +
      "\n"
      "# HELP agent_plugin_old_builds_open Replaced builds whose calls still run.\n"
      "# TYPE agent_plugin_old_builds_open gauge\n"
      "agent_plugin_old_builds_open " +
      std::to_string(closing_.size()) + "\n";
  return text;
}

json::object GuardPlugins::entry_json(const std::string& name, const Entry& entry) const {
  return {{"name", name},
          {"build", build_of(name, entry.loaded_from)},
          {"path", entry.loaded_from.string()},
          {"file", entry.file.string()},
          {"reloads", entry.reloads}};
}

void GuardPlugins::sweep_locked() const {
  std::erase_if(closing_, [this](const hookset::Unloaded& unloaded) {
    if (!unloaded.ready()) return false;
    ++closed_;
    if (unloaded.resident()) ++resident_;
    if (unloaded.in_service()) ++in_service_;
    return true;
  });
}

json::object GuardPlugins::describe_locked() const {
  sweep_locked();
  json::array list;
  for (const auto& [name, entry] : plugins_) list.push_back(entry_json(name, entry));
  return {{"directory", directory_.string()},
          {"plugins", std::move(list)},
          {"reloads", reloads_},
          {"refused", refused_},
          {"old_builds",
           {{"open", closing_.size()},
            {"closed", closed_},
            {"in_service", in_service_},
            {"still_mapped", resident_}}}};
}
