#include "upstream/connection.h"

#include <openssl/evp.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "core/json_text.h"
#include "upstream/http_request.h"
#include "upstream/responses.h"
#include "upstream/script.h"

namespace curlretry::upstream {
namespace {

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr std::uint64_t kMaxBig = std::uint64_t{1} << 34;  // /big/<bytes>: 16 GiB, for benches

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
  void update(std::string_view data) { EVP_DigestUpdate(ctx_.get(), data.data(), data.size()); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_.get(), digest, &size);
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
      out += "0123456789abcdef"[digest[i] >> 4];
      out += "0123456789abcdef"[digest[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

enum class RouteKind : std::uint8_t { script, count, reset, big, ok, arm, not_found, bad };

struct Route {
  RouteKind kind = RouteKind::not_found;
  std::string key;
  Script script;
  std::uint64_t bytes = 0;  // /big/<bytes>
  std::string error;        // why a request is `bad`
  std::string arm_prefix;   // /arm/...?path=<prefix>
};

Route bad(std::string error) {
  Route r;
  r.kind = RouteKind::bad;
  r.error = std::move(error);
  return r;
}

Route script_route(std::string_view rest);

// "/s/<key>/<script>": the script is everything after the key, so `+ct=a/b` needs no escaping.
Route route_of(std::string_view path, std::string_view target) {
  Route r;
  auto after = [&path](std::string_view prefix) -> std::optional<std::string_view> {
    if (!path.starts_with(prefix)) return std::nullopt;
    return path.substr(prefix.size());
  };
  if (path == "/ok") {
    r.kind = RouteKind::ok;
  } else if (auto rest = after("/s/")) {
    return script_route(*rest);
  } else if (auto rest = after("/arm/")) {
    // Checked now, so that a typo fails the arming, not the program's request later.
    Route checked = script_route(*rest);
    if (checked.kind == RouteKind::bad) return checked;
    const std::size_t query = target.find("?path=");
    auto prefix = query == std::string_view::npos ? std::nullopt : percent_decode(target.substr(query + 6));
    if (!prefix || !prefix->starts_with("/") || prefix->find('&') != std::string::npos) {
      return bad("want /arm/<key>/<script>?path=<prefix>, the prefix starting with /");
    }
    r.kind = RouteKind::arm;
    r.key = std::string(*rest);
    r.arm_prefix = std::move(*prefix);
  } else if (auto key = after("/count/")) {
    r.kind = RouteKind::count;
    r.key = std::string(*key);
  } else if (auto key = after("/reset/")) {
    r.kind = RouteKind::reset;
    r.key = std::string(*key);
  } else if (auto size = after("/big/")) {
    auto [end, ec] = std::from_chars(size->data(), size->data() + size->size(), r.bytes);
    if (ec != std::errc{} || end != size->data() + size->size() || r.bytes > kMaxBig) {
      return bad("want /big/<bytes> up to 16 GiB");
    }
    r.kind = RouteKind::big;
  }
  if ((r.kind == RouteKind::count || r.kind == RouteKind::reset) && !valid_key(r.key)) {
    return bad("keys are 1-200 characters of [A-Za-z0-9._~-]");
  }
  return r;
}

Route script_route(std::string_view rest) {
  Route r;
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("want /s/<key>/<step>,<step>,...");
  r.key = std::string(rest.substr(0, slash));
  if (!valid_key(r.key)) return bad("keys are 1-200 characters of [A-Za-z0-9._~-]");
  std::string error;
  auto script = parse_script(rest.substr(slash + 1), &error);
  if (!script) return bad(error);
  r.kind = RouteKind::script;
  r.script = std::move(*script);
  return r;
}

// The helper endpoints, and the upstream's own complaints.
Response utility_response(const Route& route, ServeContext& context) {
  Response r;
  r.content_type = "text/plain";
  switch (route.kind) {
    case RouteKind::ok:
      r.body = "ok\n";
      break;
    case RouteKind::count:
      r.body = std::to_string(context.counters.get(route.key)) + "\n";
      break;
    case RouteKind::reset:
      context.counters.reset(route.key);
      r.body = "reset key=" + route.key + "\n";
      break;
    case RouteKind::arm:
      if (context.arms) context.arms->arm(route.arm_prefix, route.key);
      r.body = "armed " + route.arm_prefix + "\n";
      break;
    case RouteKind::big:
      r.content_type = "application/octet-stream";
      r.pattern = route.bytes;
      break;
    case RouteKind::not_found:
      r.status = 404;
      r.content_type = "application/json";
      r.body = R"({"error":"not found"})";
      break;
    case RouteKind::bad:
    case RouteKind::script:
      r.status = 400;
      r.content_type = "application/json";
      // The step as written, which may hold any byte a client put in the path.
      r.body = R"({"error":"bad script","detail":)" + core::json_text::quote(route.error) + "}";
      break;
  }
  return r;
}

void log_request(const Request& request, const Route& route, std::uint64_t attempt, const Step* step) {
  // The path without query; the query may carry a test's fake secret, and logs should not.
  if (step) {
    const bool armed = !request.path.starts_with("/s/");
    std::fprintf(stderr, "flaky-upstream: %s %s%s/s/%s attempt=%llu step=%s\n", request.method.c_str(),
                 armed ? request.path.c_str() : "", armed ? " -> " : "", route.key.c_str(),
                 static_cast<unsigned long long>(attempt), step->text.c_str());
  } else {
    std::fprintf(stderr, "flaky-upstream: %s %s\n", request.method.c_str(), request.path.c_str());
  }
}

}  // namespace

void serve_connection(Stream& stream, ServeContext& context) {
  for (;;) {
    Request request;
    std::string error;
    HeadResult head = read_head(stream, request, &error);
    if (head == HeadResult::closed) return;
    if (head == HeadResult::malformed) {
      Response r = utility_response(bad(error), context);
      r.close = true;
      send_response(stream, request, r);
      stream.finish_clean();
      return;
    }
    context.served.fetch_add(1, std::memory_order_relaxed);

    Route route = route_of(request.path, request.target);
    if (route.kind == RouteKind::not_found && context.arms) {
      if (auto armed = context.arms->find(request.path)) route = script_route(*armed);
    }
    if (route.kind == RouteKind::bad) std::fprintf(stderr, "flaky-upstream: bad request: %s\n", route.error.c_str());
    Exchange exchange;
    exchange.key = route.key;
    const Step* step = nullptr;
    if (route.kind == RouteKind::script) {
      exchange.attempt = context.counters.next(route.key);
      step = &route.script.at(exchange.attempt);
    }
    if (context.verbose) log_request(request, route, exchange.attempt, step);

    if (step && step->kind == StepKind::early503) {
      play_early(stream, request, *step, exchange);
      return;
    }
    // curl waits up to a second for this before sending a large body anyway.
    if (request.expect_continue && request.has_body() && !stream.write_all(kContinue)) return;

    std::optional<Sha256> digest;
    if (step && step->kind == StepKind::echo) digest.emplace();
    bool body_ok = read_body(stream, request, [&](std::string_view piece) {
      exchange.body_length += piece.size();
      if (digest) digest->update(piece);
    });
    if (!body_ok) {
      stream.finish_clean();
      return;
    }
    if (digest) exchange.body_sha256 = digest->hex();

    if (step) {
      if (!play_step(stream, request, *step, exchange)) return;
      continue;
    }
    Response r = utility_response(route, context);
    if (!send_response(stream, request, r) || !request.keep_alive) {
      stream.finish_clean();
      return;
    }
  }
}

}  // namespace curlretry::upstream
