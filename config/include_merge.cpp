#include "config/include_merge.h"

#include <climits>
#include <cstdlib>
#include <deque>
#include <exception>
#include <new>
#include <set>

#include "config/file_search.h"
#include "config/load_error.h"
#include "config/yaml_loader.h"
#include "config/yaml_tree.h"
#include "config/yaml_values.h"

namespace curlretry::config {
namespace {

// Bounds for hostile or runaway setups: every file is already bounded in size by the reader.
constexpr std::size_t kMaxFiles = 64;
constexpr std::size_t kMaxIncludeDepth = 16;

void tag(YamlNode& node, std::string_view file) {
  node.file = file;
  for (YamlNode& item : node.items) tag(item, file);
  for (auto& [key, value] : node.entries) {
    tag(key, file);
    tag(value, file);
  }
}

std::string real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return path;
  std::string out = resolved;
  std::free(resolved);
  return out;
}

std::string relative_to(const std::string& including_file, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  const auto slash = including_file.rfind('/');
  return slash == std::string::npos ? path : including_file.substr(0, slash + 1) + path;
}

// `next` merged into `base`: see include_merge.h. A null in `next` (a section with everything
// commented out) leaves `base` as it is.
void merge_into(YamlNode& base, const YamlNode& next, bool top_level) {
  for (const auto& [key, value] : next.entries) {
    YamlNode* existing = nullptr;
    for (auto& [name, old] : base.entries) {
      if (name.text == key.text) existing = &old;
    }
    if (existing == nullptr) {
      base.entries.emplace_back(key, value);
    } else if (value.kind == YamlNode::Kind::null) {
      continue;
    } else if (top_level && key.text == "rules" && existing->kind == YamlNode::Kind::sequence &&
               value.kind == YamlNode::Kind::sequence) {
      existing->items.insert(existing->items.end(), value.items.begin(), value.items.end());
    } else if (existing->kind == YamlNode::Kind::map && value.kind == YamlNode::Kind::map) {
      merge_into(*existing, value, false);
    } else {
      *existing = value;
    }
  }
}

class Combiner {
 public:
  explicit Combiner(std::string named_by) : named_by_(std::move(named_by)) {}

  // Reads `path` and, before it, what it includes. `item` is the include entry that named it
  // (nullptr for a file given at the top). Throws ConfigError.
  void read(const std::string& path, const YamlNode* item) {
    const auto fail_at_item = [&](const std::string& problem) {
      if (item != nullptr) throw ConfigError{where(*item) + ": include: " + problem};
      throw ConfigError{(named_by_ == "CURLRETRY_CONFIG" ? "CURLRETRY_CONFIG=" : "") + path + ": " + problem};
    };
    if (files_.size() >= kMaxFiles) fail_at_item("more than " + std::to_string(kMaxFiles) + " config files");
    if (stack_.size() >= kMaxIncludeDepth) {
      fail_at_item("includes nested deeper than " + std::to_string(kMaxIncludeDepth));
    }
    std::string content, why;
    if (read_config_file(path, content, why) != ReadStatus::ok) {
      fail_at_item(item != nullptr ? "cannot read " + path + ": " + why : "cannot read the config: " + why);
    }
    const std::string real = real_path(path);
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i].real != real) continue;
      std::string cycle;
      for (std::size_t j = i; j < stack_.size(); ++j) cycle += stack_[j].path + " -> ";
      fail_at_item("cycle: " + cycle + path);
    }
    if (!seen_.insert(real).second) return;  // already applied by another include

    names_.push_back(path);
    auto parsed = parse_yaml(content);
    if (auto* error = std::get_if<YamlError>(&parsed)) {
      throw ConfigError{error->has_position ? path + ":" + std::to_string(error->at.line) + ":" +
                                                  std::to_string(error->at.column) + ": " + error->message
                                            : path + ": " + error->message};
    }
    YamlNode root = std::move(std::get<YamlNode>(parsed));
    tag(root, names_.back());

    if (root.kind == YamlNode::Kind::map) {
      for (std::size_t i = 0; i < root.entries.size(); ++i) {
        if (root.entries[i].first.text != "include") continue;
        const YamlNode includes = root.entries[i].second;
        root.entries.erase(root.entries.begin() + static_cast<std::ptrdiff_t>(i));
        stack_.push_back({path, real});
        read_includes(includes, path);
        stack_.pop_back();
        break;
      }
    }
    // Each file must be a valid config on its own, so its errors name its own lines.
    LoadResult alone = parse_config_tree(root, path);
    if (!alone.ok()) throw ConfigError{alone.error};
    files_.push_back(path);
    trees_.push_back(std::move(root));
  }

  LoadResult combine(const std::vector<std::string>& top_files) const {
    YamlNode merged = trees_.front();
    for (std::size_t i = 1; i < trees_.size(); ++i) merge_into(merged, trees_[i], true);
    LoadResult result = parse_config_tree(merged, files_.back());
    if (result.ok()) {
      std::string joined;
      for (const auto& f : top_files) joined += (joined.empty() ? "" : ":") + f;
      result.config->file = joined;
      result.config->files = files_;
    }
    return result;
  }

 private:
  struct Open {
    std::string path;
    std::string real;
  };

  std::string where(const YamlNode& node) const {
    return std::string(node.file) + ":" + std::to_string(node.at.line) + ":" + std::to_string(node.at.column);
  }

  void read_includes(const YamlNode& includes, const std::string& including) {
    if (includes.kind == YamlNode::Kind::scalar) {
      read_one(includes, including);
      return;
    }
    if (includes.kind != YamlNode::Kind::sequence) {
      throw ConfigError{where(includes) + ": include: expected a list of files, got " +
                        std::string(describe(includes))};
    }
    for (const YamlNode& item : includes.items) read_one(item, including);
  }

  void read_one(const YamlNode& item, const std::string& including) {
    if (item.kind != YamlNode::Kind::scalar || item.text.empty()) {
      throw ConfigError{where(item) + ": include: expected a file name, got " + std::string(describe(item))};
    }
    read(relative_to(including, item.text), &item);
  }

  std::string named_by_;
  std::deque<std::string> names_;  // stable storage for YamlNode::file
  std::vector<std::string> files_;
  std::vector<YamlNode> trees_;
  std::set<std::string> seen_;
  std::vector<Open> stack_;
};

}  // namespace

std::vector<std::string> split_config_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    if (end > start) out.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

LoadResult load_files(const std::vector<std::string>& paths, const std::string& named_by) {
  LoadResult result;
  try {
    if (paths.empty()) {
      result.error = named_by + ": no config file named";
      return result;
    }
    Combiner combiner(named_by);
    for (const std::string& path : paths) combiner.read(path, nullptr);
    return combiner.combine(paths);
  } catch (...) {
    result.error = current_load_error("");
  }
  return result;
}

}  // namespace curlretry::config
