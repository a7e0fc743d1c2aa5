#include "shim/cookie_snapshot.h"

#include <optional>
#include <set>
#include <string_view>

#include "core/ascii.h"
#include "shim/reentry_guard.h"

namespace curlretry::shim {
namespace {

// A Netscape line: domain, tailmatch, path, secure, expires, name, value (tab-separated),
// the domain prefixed "#HttpOnly_" for an HttpOnly cookie.
struct Line {
  std::string_view fields[7];
  bool ok = false;
};

Line parse(std::string_view text) {
  Line line;
  size_t start = 0;
  for (int i = 0; i < 7; ++i) {
    size_t tab = i == 6 ? text.size() : text.find('\t', start);
    if (tab == std::string_view::npos) return line;
    line.fields[i] = text.substr(start, tab - start);
    start = tab + 1;
  }
  line.ok = true;
  return line;
}

std::string key_of(const Line& line) {
  std::string_view domain = line.fields[0];
  if (domain.substr(0, 10) == "#HttpOnly_") domain.remove_prefix(10);
  if (!domain.empty() && domain.front() == '.') domain.remove_prefix(1);
  std::string key(domain);
  key.append(1, '\t').append(line.fields[2]).append(1, '\t').append(line.fields[5]);
  return key;
}

// The same cookie, expired: adding it makes libcurl drop the one it replaces.
std::string expired(const Line& line) {
  std::string out;
  for (int i = 0; i < 7; ++i) {
    if (i) out += '\t';
    out += i == 4 ? std::string_view("1") : line.fields[i];
  }
  return out;
}

std::vector<std::string> cookie_list(const real::Api& api, CURL* easy) {
  std::vector<std::string> lines;
  struct curl_slist* list = nullptr;
  if (api.easy_getinfo(easy, CURLINFO_COOKIELIST, &list) != CURLE_OK) return lines;
  for (struct curl_slist* item = list; item != nullptr; item = item->next) {
    if (item->data != nullptr) lines.emplace_back(item->data);
  }
  api.slist_free_all(list);
  return lines;
}

// The names in the Set-Cookie headers of every response of the last attempt (redirects
// included); nullopt when this libcurl cannot say (before 7.83): then every cookie counts.
std::optional<std::set<std::string, std::less<>>> names_set(const real::Api& api, CURL* easy) {
  if (api.easy_header == nullptr) return std::nullopt;
  std::set<std::string, std::less<>> names;
  long redirects = 0;
  api.easy_getinfo(easy, CURLINFO_REDIRECT_COUNT, &redirects);
  for (long request = 0; request <= redirects; ++request) {
    struct curl_header* h = nullptr;
    if (api.easy_header(easy, "Set-Cookie", 0, CURLH_HEADER, static_cast<int>(request), &h) != CURLHE_OK) continue;
    size_t amount = h->amount;
    for (size_t i = 0; i < amount; ++i) {
      if (i > 0 && api.easy_header(easy, "Set-Cookie", i, CURLH_HEADER, static_cast<int>(request), &h) != CURLHE_OK)
        break;
      std::string_view value = h->value ? h->value : "";
      names.emplace(core::ascii::field_value(value.substr(0, value.find('='))));
    }
  }
  return names;
}

}  // namespace

void CookieSnapshot::take(const real::Api& api, CURL* easy) {
  clear();
  if (api.easy_getinfo == nullptr || api.easy_setopt == nullptr || api.slist_free_all == nullptr) return;
  LibcurlScope scope(api);
  // No "RELOAD" of CURLOPT_COOKIEFILE's files here: libcurl (7.88) loads them at the start of
  // every transfer, each attempt included, so they need no snapshot; loading them once more
  // before the first attempt brought back a cookie a previous transfer had deleted with
  // Max-Age=0 (curl test 329, with retries off).
  lines_ = cookie_list(api, easy);
  taken_ = true;
}

void CookieSnapshot::restore(const real::Api& api, CURL* easy) const {
  if (!taken_) return;
  LibcurlScope scope(api);
  auto names = names_set(api, easy);
  if (names && names->empty()) return;  // the attempt set no cookie
  auto touched = [&](const Line& line) { return !names || names->count(line.fields[5]) != 0; };
  std::set<std::string> kept_keys;
  for (const std::string& text : lines_) {
    Line line = parse(text);
    if (line.ok) kept_keys.insert(key_of(line));
  }
  std::set<std::string> now_lines;
  for (const std::string& text : cookie_list(api, easy)) {
    Line line = parse(text);
    if (!line.ok || !touched(line)) continue;
    now_lines.insert(text);
    if (kept_keys.count(key_of(line)) == 0) api.easy_setopt(easy, CURLOPT_COOKIELIST, expired(line).c_str());
  }
  // Kept cookies the attempt changed or deleted go back as they were.
  for (const std::string& text : lines_) {
    Line line = parse(text);
    if (line.ok && touched(line) && now_lines.count(text) == 0) api.easy_setopt(easy, CURLOPT_COOKIELIST, text.c_str());
  }
}

}  // namespace curlretry::shim
