#include "tools.hpp"

using namespace std::chrono_literals;

std::string string_arg(const json::object& args, std::string_view name) {
  const json::value* value = args.if_contains(name);
  if (!value || !value->is_string())
    throw ToolError("argument \"" + std::string(name) + "\" must be a string");
  return std::string(value->get_string());
}

// A slow tool's "pages": 1 to 1,000.
std::int64_t page_count(const json::object& args) {
  const json::value* pages = args.if_contains("pages");
  if (!pages || !pages->is_int64() || pages->get_int64() < 1 || pages->get_int64() > 1000)
    throw ToolError("argument \"pages\" must be a number from 1 to 1000");
  return pages->get_int64();
}

ToolRegistry& tool_registry() {
  static ToolRegistry registry;
  return registry;
}
void discover_tools(Workspace& workspace) {
  ToolRegistry& tools = tool_registry();
  tools.add({"fs_read", "read a file of the workspace", [&workspace](const json::object& args) {
               const std::string path = string_arg(args, "path");
               std::optional<std::string> content = workspace.read(path);
               if (!content) throw ToolError("no such file: " + path);
               return json::value{{"path", path}, {"content", *content}};
             }});
  tools.add({"fs_write", "write a file of the workspace", [&workspace](const json::object& args) {
               const std::string path = string_arg(args, "path");
               std::string content = string_arg(args, "content");
               const std::size_t bytes = content.size();
               workspace.write(path, std::move(content));
               return json::value{{"path", path}, {"bytes", bytes}};
             }});
  tools.add({"http_get", "fetch a URL (simulated)",
             [](const json::object& args) {
    const std::string url = string_arg(args, "url");
    return json::value{{"url", url}, {"status", 200}, {"body", "<simulated page of " + url + ">"}};
             }});
  tools.add({"shell", "run a shell command (simulated)",
             [](const json::object& args) {
    return json::value{{"stdout", "<simulated output of " + string_arg(args, "command") + ">"}};
             }});
  // Slow (2 ms a page), and its pages saved to the workspace - once every guard has allowed.
  tools.add({"crawl", "fetch a site's pages and save them to /workspace/crawl/ (simulated)",
             [](const json::object& args) {
    const std::string site = string_arg(args, "site");
    const std::int64_t pages = page_count(args);
    std::string content;
    for (std::int64_t page = 1; page <= pages; ++page)
      content += "<simulated page " + std::to_string(page) + " of " + site + ">\n";
    return json::value{{"site", site},
                       {"pages", pages},
                       {"saved_to", "/workspace/crawl/" + site + ".txt"},
                       {"content", content}};
             },
             2ms,
             [&workspace](const json::value& result) {
    workspace.write(std::string(result.at("saved_to").get_string()),
                    std::string(result.at("content").get_string()));
  }});
}
