#include "proxy/upgrade.h"

// GCC 12 with -fsanitize=address (the asan preset, -Werror) warns inside Beast 1.74's response
// parser (basic_parser<false>::content_length_unchecked returns boost::none): "may be used
// uninitialized", a known false positive of that optional. Only this file parses responses.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <random>
#include <type_traits>

#include "core/decide.h"
#include "core/url.h"
#include "proxy/exchange.h"
#include "proxy/headers.h"
#include "proxy/request_rules.h"
#include "proxy/server.h"
#include "proxy/session.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace curlretry::proxy {

std::optional<UpgradeTarget> upgrade_target(const std::string& url, const UpgradeHead& head) {
  const auto parts = core::split_url(url);
  if (!parts || (parts->scheme != "http" && parts->scheme != "https")) return std::nullopt;
  const std::size_t begin = url.find("://") + 3;
  const std::size_t end = std::min(url.find_first_of("/?#", begin), url.size());
  std::string authority = url.substr(begin, end - begin);
  if (authority.find('@') != std::string::npos) return std::nullopt;  // no credentials in a Host
  std::string target = url.substr(end);
  if (const std::size_t hash = target.find('#'); hash != std::string::npos) target.erase(hash);
  if (target.empty() || target[0] != '/') target = "/" + target;

  UpgradeTarget out;
  out.tls = parts->scheme == "https";
  out.host = parts->host;
  out.port = parts->port.empty() ? (out.tls ? "443" : "80") : parts->port;
  out.path = parts->path;
  out.head = head.method + " " + target + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  for (const auto& [name, value] : head.headers) out.head += name + ": " + value + "\r\n";
  out.head += "Connection: Upgrade\r\nUpgrade: " + head.upgrade + "\r\n\r\n";
  return out;
}

namespace {

using Response = http::response_parser<http::string_body>;

// A non-101 answer is read whole (it is a handshake's refusal, an error page) up to this.
constexpr std::uint64_t kAnswerLimit = 1024 * 1024;
constexpr std::size_t kBodyPrefix = 64 * 1024;  // what core::decide() reads of a body, as the shim bounds it
constexpr auto kConnectTimeout = std::chrono::seconds(30);  // Exchange's CURLOPT_CONNECTTIMEOUT_MS

template <class Stream>
tcp::socket& socket_of(Stream& s) {
  return beast::get_lowest_layer(s).socket();
}

template <class Client, class Up>
class Relay final : public Upgrade, public std::enable_shared_from_this<Relay<Client, Up>> {
  static constexpr bool kUpTls = std::is_same_v<Up, TlsStream>;

 public:
  Relay(Server& server, Client& client, std::shared_ptr<void> keep, UpgradeTarget target,
        std::function<void(std::string)> done)
      : server_(server),
        client_(client),
        keep_(std::move(keep)),
        target_(std::move(target)),
        done_(std::move(done)),
        resolver_(socket_of(client).get_executor()),
        wait_(socket_of(client).get_executor()),
        random_(std::random_device{}()),
        policy_(server.policy_for("GET", target_.host, target_.path)) {}

  void start() override {
    began_ = Clock::now();
    attempt();
  }

  void sweep(Clock::time_point now) override {
    if (finished_) return;
    if (switched_) {
      const auto idle = std::chrono::milliseconds(server_.options().settings.tunnel_idle_ms);
      const bool stalled = (up_.writing && now - up_.write_began >= server_.options().write_stall) ||
                           (down_.writing && now - down_.write_began >= server_.options().write_stall);
      if (now - active_at_ >= idle || stalled) finish("");
    } else if (now >= deadline_) {
      deadline_ = Clock::time_point::max();
      failed(core::Transport::timeout);
    }
  }

  void close() override {
    if (finished_) return;
    finished_ = true;
    stop_upstream();
    wait_.cancel();
  }

 private:
  struct Direction {
    std::array<char, 16 * 1024> buffer{};
    bool writing = false;
    Clock::time_point write_began{};
  };

  std::shared_ptr<Relay> self() { return this->shared_from_this(); }
  // A handler of an attempt given up (its stream closed for the retry) finds a newer attempt.
  bool stale(int gen) const { return finished_ || gen != attempt_; }

  void stop_upstream() {
    resolver_.cancel();
    if (up_stream_) {
      boost::system::error_code ignored;
      socket_of(*up_stream_).close(ignored);
    }
  }

  // One handshake attempt: resolve, connect, TLS, the head, the answer's head.
  void attempt() {
    attempt_began_ = Clock::now();
    deadline_ = attempt_began_ + kConnectTimeout;
    buffer_.clear();
    if constexpr (kUpTls) {
      std::string error;
      auto context = server_.upstream_tls(&error);
      if (!context) {
        finish(error_answer(502, error));
        return;
      }
      up_stream_ = std::make_shared<Up>(socket_of(client_).get_executor(), *context);
      SSL* ssl = up_stream_->native_handle();
      boost::system::error_code ec;
      const auto ip = asio::ip::make_address(target_.host, ec);
      if (ec) {
        SSL_set_tlsext_host_name(ssl, target_.host.c_str());
        SSL_set1_host(ssl, target_.host.c_str());
      } else {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target_.host.c_str());
      }
    } else {
      up_stream_ = std::make_shared<Up>(socket_of(client_).get_executor());
    }
    // Through the user's own proxy, the connection is to it (their choice, loopback or not) and it
    // is asked for a tunnel to the target, whose name is resolved there.
    const std::optional<ParentProxy>& parent = server_.parent();
    resolver_.async_resolve(
        parent ? parent->host : target_.host, parent ? parent->port : target_.port,
        [self = self(), gen = attempt_](boost::system::error_code ec, tcp::resolver::results_type results) {
          if (self->stale(gen)) return;
          self->connect(gen, ec ? tcp::resolver::results_type() : results);
        });
  }

  // To the target (the loopback rule applied), or to the user's own proxy (then through_parent).
  void connect(int gen, const tcp::resolver::results_type& results) {
    const bool direct = !server_.parent();
    std::vector<tcp::endpoint> allowed;
    for (const auto& entry : results) {
      if (!direct || !target_.refuse_loopback || !loopback_address(entry.endpoint().data())) {
        allowed.push_back(entry.endpoint());
      }
    }
    if (allowed.empty()) {
      failed(core::Transport::connect_refused);
      return;
    }
    beast::get_lowest_layer(*up_stream_)
        .async_connect(
            allowed, [self = self(), gen, up = up_stream_, direct](boost::system::error_code ec, const tcp::endpoint&) {
              if (self->stale(gen)) return;
              if (ec) {
                self->failed(core::Transport::connect_refused);
              } else if (direct) {
                self->connected();
              } else {
                self->through_parent(gen, up);
              }
            });
  }

  // The user's own proxy asked for the tunnel the handshake then goes through. Its refusal is an
  // attempt that failed to connect (retried under the policy, as libcurl's CONNECT failure is),
  // except that a proxy refusing the credentials (407, or 401 as tinyproxy answers) or forbidding
  // the target will not change its mind.
  void through_parent(int gen, std::shared_ptr<Up> up) {
    async_tunnel_through(socket_of(*up_stream_), *server_.parent(), target_.host, target_.port,
                         [self = self(), gen, up](std::optional<TunnelRefusal> refusal, std::string early) {
                           if (self->stale(gen)) return;
                           if (refusal) {
                             self->server_.parent_refused(*refusal, self->target_.host, self->target_.port);
                             const bool final =
                                 refusal->status == 401 || refusal->status == 403 || refusal->status == 407;
                             self->failed(final ? core::Transport::other : core::Transport::connect_refused);
                             return;
                           }
                           // Nothing of the target's can come before the handshake's first byte.
                           if (!early.empty()) {
                             self->failed(core::Transport::recv);
                             return;
                           }
                           self->connected();
                         });
  }

  void connected() {
    if constexpr (kUpTls) {
      up_stream_->async_handshake(asio::ssl::stream_base::client, [self = self(), gen = attempt_, up = up_stream_](boost::system::error_code ec) {
        if (self->stale(gen)) return;
        if (ec) {
          // A certificate that does not verify is final (libcurl's CURLE_PEER_FAILED_VERIFICATION
          // is not retried either); a handshake cut short is a transport failure like any.
          const long verify = SSL_get_verify_result(self->up_stream_->native_handle());
          self->failed(verify != X509_V_OK ? core::Transport::other : core::Transport::tls_handshake);
          return;
        }
        self->send_head();
      });
    } else {
      send_head();
    }
  }

  void send_head() {
    out_ = target_.head + target_.early;
    asio::async_write(*up_stream_, asio::buffer(out_), [self = self(), gen = attempt_, up = up_stream_](boost::system::error_code ec, std::size_t) {
      if (self->stale(gen)) return;
      if (ec) {
        self->failed(core::Transport::send);
        return;
      }
      self->read_answer();
    });
  }

  void read_answer() {
    deadline_ = Clock::now() + std::chrono::milliseconds(server_.options().settings.tunnel_idle_ms);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server_.options().header_limit));
    parser_->body_limit(kAnswerLimit);
    http::async_read_header(*up_stream_, buffer_, *parser_, [self = self(), gen = attempt_, up = up_stream_](boost::system::error_code ec, std::size_t) {
      if (self->stale(gen)) return;
      if (ec) {
        self->failed(self->buffer_.size() == 0 && ec == http::error::end_of_stream ? core::Transport::empty_reply
                                                                                 : core::Transport::recv);
        return;
      }
      if (self->parser_->get().result_int() == 101) {
        self->switched();
        return;
      }
      http::async_read(*self->up_stream_, self->buffer_, *self->parser_,
                       [self, gen, up](boost::system::error_code ec2, std::size_t) {
                         if (self->stale(gen)) return;
                         if (ec2) {
                           self->failed(core::Transport::recv);
                           return;
                         }
                         self->answered();
                       });
    });
  }

  core::Outcome outcome(core::Transport transport) const {
    core::Outcome o;
    o.transport = transport;
    o.attempt = attempt_;
    o.elapsed = std::chrono::duration_cast<core::Millis>(Clock::now() - began_);
    o.previous_delay = previous_delay_;
    o.unsafe_method = false;  // a GET
    return o;
  }

  // Retried when the policy says so, else given up with `answer`.
  void judge(const core::Outcome& o, std::string answer) {
    const core::Verdict verdict = core::decide(policy_, o, random_, std::chrono::system_clock::now());
    if (verdict.action != core::Action::retry) {
      finish(std::move(answer));
      return;
    }
    stop_upstream();
    previous_delay_ = verdict.delay;
    ++attempt_;
    deadline_ = Clock::time_point::max();  // the wait is the policy's, bounded by its max_elapsed
    wait_.expires_after(verdict.delay);
    wait_.async_wait([self = self()](boost::system::error_code ec) {
      if (ec || self->finished_) return;
      self->attempt();
    });
  }

  void failed(core::Transport transport) {
    if (finished_) return;
    const int status = transport == core::Transport::timeout ? 504 : 502;
    judge(outcome(transport), error_answer(status, transport == core::Transport::other
                                                       ? "the upstream's certificate did not verify"
                                                       : "the upstream could not be reached"));
  }

  // The proxy's own answer: for a non-route target the same 502 body whatever failed.
  std::string error_answer(int status, const std::string& detail) const {
    const std::string body = error_body(target_.opaque_errors ? std::string_view(kUnreachable) : detail);
    return "HTTP/1.1 " + std::to_string(status) + " " +
           std::string(http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)))) +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }

  // A final non-101 answer: judged like a transfer's response, relayed whole on give-up.
  void answered() {
    const auto& response = parser_->get();
    core::Outcome o = outcome(core::Transport::ok);
    o.status = static_cast<int>(response.result_int());
    // The hints as the shim reads them (core/hints.h): the first of a repeated one counts.
    for (const auto& f : response) {
      const auto name = f.name_string();
      const auto value = f.value();
      o.hints.take(std::string_view(name.data(), name.size()), std::string_view(value.data(), value.size()), o.status);
    }
    o.body_prefix = response.body().substr(0, kBodyPrefix);

    std::string out = "HTTP/1.1 " + std::to_string(response.result_int()) + " " + std::string(response.reason()) + "\r\n";
    const std::vector<std::string> listed = connection_tokens(response[http::field::connection]);
    for (const auto& f : response) {
      if (hop_by_hop(f.name_string(), listed) || framing_header(f.name_string())) continue;
      out += std::string(f.name_string()) + ": " + std::string(f.value()) + "\r\n";
    }
    out += "Content-Length: " + std::to_string(response.body().size()) + "\r\nConnection: close\r\n\r\n";
    out += response.body();
    judge(o, std::move(out));
  }

  // 101: its head (hop-by-hop fields but the upgrade's own rebuilt) and whatever came after it,
  // then bytes both ways.
  void switched() {
    switched_ = true;
    active_at_ = Clock::now();
    deadline_ = Clock::time_point::max();
    const auto& response = parser_->get();
    std::string out = "HTTP/1.1 101 " + std::string(response.reason()) + "\r\n";
    const std::vector<std::string> listed = connection_tokens(response[http::field::connection]);
    for (const auto& f : response) {
      if (hop_by_hop(f.name_string(), listed)) continue;
      out += std::string(f.name_string()) + ": " + std::string(f.value()) + "\r\n";
    }
    out += "Connection: Upgrade\r\nUpgrade: " + std::string(response[http::field::upgrade]) + "\r\n\r\n";
    const auto data = buffer_.data();
    out.append(static_cast<const char*>(data.data()), data.size());
    buffer_.clear();
    out_ = std::move(out);
    down_.writing = true;
    down_.write_began = Clock::now();
    asio::async_write(client_, asio::buffer(out_), [self = self()](boost::system::error_code ec, std::size_t) {
      self->down_.writing = false;
      if (self->finished_) return;
      if (ec) {
        self->finish("");
        return;
      }
      self->pump(self->client_, *self->up_stream_, self->up_);
      self->pump(*self->up_stream_, self->client_, self->down_);
    });
  }

  template <class From, class To>
  void pump(From& from, To& to, Direction& d) {
    from.async_read_some(asio::buffer(d.buffer), [self = self(), &from, &to, &d](boost::system::error_code ec,
                                                                                   std::size_t n) {
      if (self->finished_) return;
      if (ec) {
        // Either side's end (a close after the WebSocket's closing handshake, or a cut) ends both.
        self->finish("");
        return;
      }
      self->active_at_ = Clock::now();
      d.writing = true;
      d.write_began = self->active_at_;
      asio::async_write(to, asio::buffer(d.buffer.data(), n), [self, &from, &to, &d](boost::system::error_code ec2,
                                                                                     std::size_t) {
        d.writing = false;
        if (self->finished_) return;
        if (ec2) {
          self->finish("");
          return;
        }
        self->active_at_ = Clock::now();
        self->pump(from, to, d);
      });
    });
  }

  void finish(std::string answer) {
    if (finished_) return;
    finished_ = true;
    stop_upstream();
    wait_.cancel();
    auto done = std::move(done_);
    if (done) done(std::move(answer));
  }

  Server& server_;
  Client& client_;
  std::shared_ptr<void> keep_;  // the Session, whose stream client_ is
  UpgradeTarget target_;
  std::function<void(std::string)> done_;
  tcp::resolver resolver_;
  asio::steady_timer wait_;  // the backoff between handshake attempts
  core::SplitMix random_;
  const core::Policy& policy_;
  std::shared_ptr<Up> up_stream_;  // shared with its handlers: a retry's new stream never frees one in use
  beast::flat_buffer buffer_;
  std::optional<Response> parser_;
  std::string out_;
  Direction up_;    // client -> upstream
  Direction down_;  // upstream -> client
  int attempt_ = 1;
  core::Millis previous_delay_{0};
  Clock::time_point began_{};
  Clock::time_point attempt_began_{};
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point active_at_{};
  bool switched_ = false;
  bool finished_ = false;
};

}  // namespace

template <class ClientStream>
std::shared_ptr<Upgrade> make_upgrade(Server& server, ClientStream& client, std::shared_ptr<void> keep,
                                      UpgradeTarget target, std::function<void(std::string)> done) {
  if (target.tls)
    return std::make_shared<Relay<ClientStream, TlsStream>>(server, client, std::move(keep), std::move(target),
                                                            std::move(done));
  return std::make_shared<Relay<ClientStream, PlainStream>>(server, client, std::move(keep), std::move(target),
                                                            std::move(done));
}

template std::shared_ptr<Upgrade> make_upgrade<PlainStream>(Server&, PlainStream&, std::shared_ptr<void>,
                                                            UpgradeTarget, std::function<void(std::string)>);
template std::shared_ptr<Upgrade> make_upgrade<TlsStream>(Server&, TlsStream&, std::shared_ptr<void>, UpgradeTarget,
                                                          std::function<void(std::string)>);

}  // namespace curlretry::proxy
