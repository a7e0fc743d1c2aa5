#include "shim/registry.h"

#include "shim/fork_guard.h"

#include <memory>
#include <mutex>
#include <unordered_map>

namespace curlretry::shim::registry {
namespace {

struct Table {
  std::mutex mutex;
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> transfers;
};

// Leaked on purpose: hosts clean up handles from atexit handlers and other libraries' destructors.
Table& table() {
  static Table* t = [] {
    auto* table = new Table();
    guard_across_fork(table->mutex);
    return table;
  }();
  return *t;
}

}  // namespace

Transfer* find(CURL* easy) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.transfers.find(easy);
  return it == t.transfers.end() ? nullptr : it->second.get();
}

Transfer* add(CURL* easy, const real::Api* api) {
  auto transfer = std::make_unique<Transfer>(easy, api);
  Transfer* raw = transfer.get();
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.transfers[easy] = std::move(transfer);
  return raw;
}

void remove(CURL* easy) {
  std::unique_ptr<Transfer> doomed;  // destroyed outside the lock
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.transfers.find(easy);
  if (it == t.transfers.end()) return;
  doomed = std::move(it->second);
  t.transfers.erase(it);
}

}  // namespace curlretry::shim::registry
