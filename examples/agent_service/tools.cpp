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
void discover_tools(const Workspace& workspace, WriteEffect write) {
  ToolRegistry& tools = tool_registry();
  tools.add({"fs_read", "read a file of the workspace",
             [&workspace](const ToolCall& call) -> hookset::Task<json::value> {
               const std::string path = string_arg(call.args, "path");
               std::optional<std::string> content = workspace.read(path);
               if (!content) throw ToolError("no such file: " + path);
               co_return json::value{{"path", path}, {"content", *content}};
             }});
  tools.add({"fs_write", "write a file of the workspace",
             [write](const ToolCall& call) -> hookset::
                                               Task<json::value> {
    FileWrite change{string_arg(call.args, "path"), string_arg(call.args, "content"), call.tool};
    const std::size_t bytes = change.content.size();
    const std::string path = co_await write(std::move(change));
    co_return json::value{{"path", path}, {"bytes", bytes}};
             }});
  // The URL it fetches is the one the guards judged: parsed, canonical (ToolCall::url).
  tools.add({.name = "http_get",
             .description = "fetch a URL (simulated)",
             .run = [](const ToolCall& call) -> hookset::Task<json::value> {
               const std::string& url = call.url->text;
               co_return json::value{
                   {"url", url}, {"status", 200}, {"body", "<simulated page of " + url + ">"}};
             },
             .url_argument = "url"});
  tools.add({"shell", "run a shell command (simulated)",
             [](const ToolCall& call) -> hookset::Task<json::value> {
               co_return json::value{
                   {"stdout", "<simulated output of " + string_arg(call.args, "command") + ">"}};
             }});
  // Slow (2 ms a page), and its pages saved to the workspace - once every guard has allowed, and
  // through the same write effect as fs_write.
  tools.add({"crawl", "fetch a site's pages and save them to /workspace/crawl/ (simulated)",
             [](const ToolCall& call) -> hookset::Task<json::value> {
               const std::string site = string_arg(call.args, "site");
               const std::int64_t pages = page_count(call.args);
               std::string content;
               for (std::int64_t page = 1; page <= pages; ++page)
                 content += "<simulated page " + std::to_string(page) + " of " + site + ">\n";
               co_return json::value{{"site", site},
                                     {"pages", pages},
                                     {"saved_to", "/workspace/crawl/" + site + ".txt"},
                                     {"content", content}};
             },
             2ms,
             [write](const json::value& result) -> hookset::Task<void> {
               FileWrite change{std::string(result.at("saved_to").get_string()),
                                std::string(result.at("content").get_string()), "crawl"};
               co_await write(std::move(change));
             }});
}
