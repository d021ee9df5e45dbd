#pragma once
// The tools of the agent service: a registry filled at start-up, and the workspace the fs_* tools
// and the crawl work on. Simulated: no file, network or process is touched. A tool reads the
// workspace, but changes it only through the write effect it is given (policy.hpp: the effect
// boundary, where the write policy's hooks see every write).
#include "addresses.hpp"

#include <hookset/task.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace json = boost::json;

constexpr std::string_view workspace_root = "/workspace";

// A tool that cannot do what it was asked (a missing file, a missing argument): 422.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A call of a tool, as the hooks and then the tool see it.
struct ToolCall {
  std::string tool;
  json::object args;
  // The tool's URL argument (Tool::url_argument), parsed and canonical before any hook sees the
  // call, and in `args` as its canonical text: the guards judge what the tool will fetch.
  std::optional<WebAddress> url{};
};

// A change of the workspace that a tool asks for.
struct FileWrite {
  std::string path;
  std::string content;
  std::string tool;  // who asks
};
// How a tool changes the workspace, and the only way it has: the path written (as the write
// policy left it), or EffectRefused.
using WriteEffect = std::function<hookset::Task<std::string>(FileWrite write)>;
// A write refused by the write policy: 403, naming the hook that refused and the path it saw.
struct EffectRefused : std::runtime_error {
  EffectRefused(const std::string& reason, std::string by, std::string path)
      : std::runtime_error(reason), by(std::move(by)), path(std::move(path)) {}
  std::string by;
  std::string path;
};

struct Tool {
  std::string name;
  std::string description;
  std::function<hookset::Task<json::value>(const ToolCall& call)> run;
  // A slow tool works a page at a time (its "pages" argument), each taking this long; it can be
  // stopped between pages (operation_aborted).
  std::chrono::milliseconds per_page{0};
  // What the tool's result changes, made only once the call's guards have all allowed it.
  std::function<hookset::Task<void>(const json::value& result)> commit{};
  // The argument that is a URL, if any: parsed before any hook sees the call (ToolCall::url).
  std::string url_argument{};
};

class ToolRegistry {
 public:
  void add(Tool tool) {
    std::string name = tool.name;
    tools_.insert_or_assign(std::move(name), std::move(tool));
  }
  const Tool* find(std::string_view name) const {
    auto found = tools_.find(name);
    return found == tools_.end() ? nullptr : &found->second;
  }
  json::array describe() const {
    json::array list;
    for (const auto& [name, tool] : tools_)
      list.push_back(json::object{{"name", name}, {"description", tool.description}});
    return list;
  }
  json::array names() const {
    json::array list;
    for (const auto& entry : tools_) list.push_back(json::string(entry.first));
    return list;
  }

 private:
  std::map<std::string, Tool, std::less<>> tools_;
};

// A write that would take the workspace past its quota: 507, saying by how much.
struct QuotaExceeded : ToolError {
  using ToolError::ToolError;
};

// The workspace the fs_* tools see: files in memory, shared by every connection, and capped: the
// bytes of every file's path and content together stay within the quota (paths count too, or
// many empty files with long names would fill the memory instead). Tools get it as const: only
// the effect boundary (policy.cpp) writes.
class Workspace {
 public:
  explicit Workspace(std::size_t quota_bytes) : quota_bytes_(quota_bytes) {
    const std::string readme = "/workspace/README.md";
    files_[readme] = "Notes for the agent: keep answers short.\n";
    used_bytes_ = readme.size() + files_[readme].size();
  }
  std::optional<std::string> read(const std::string& path) const {
    std::lock_guard lock(mutex_);
    auto found = files_.find(path);
    if (found == files_.end()) return std::nullopt;
    return found->second;
  }
  void write(const std::string& path, std::string content) {
    std::lock_guard lock(mutex_);
    auto found = files_.find(path);
    const std::size_t replaced = found == files_.end() ? 0 : path.size() + found->second.size();
    const std::size_t after = used_bytes_ - replaced + path.size() + content.size();
    if (after > quota_bytes_)
      throw QuotaExceeded("workspace quota exceeded: writing " + std::to_string(content.size()) +
                          " bytes to " + path + " would bring the workspace to " +
                          std::to_string(after) + " bytes, over its quota of " +
                          std::to_string(quota_bytes_) + " bytes");
    files_[path] = std::move(content);
    used_bytes_ = after;
  }

 private:
  const std::size_t quota_bytes_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> files_;
  std::size_t used_bytes_ = 0;
};

std::string string_arg(const json::object& args, std::string_view name);
// A slow tool's "pages": 1 to 1,000.
std::int64_t page_count(const json::object& args);

// "Discovery": the tools this build offers, registered once at start-up. They read `workspace`
// and write through `write` alone.
ToolRegistry& tool_registry();
void discover_tools(const Workspace& workspace, WriteEffect write);
