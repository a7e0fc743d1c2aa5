#include "shim/registry.h"

#include "shim/fork_guard.h"
#include "shim/remembered_lookup.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace curlretry::shim::registry {
namespace {

struct Table {
  std::mutex mutex;
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> transfers;
  // Bumped on every add and remove: a thread's remembered lookup is good while it is unchanged.
  std::atomic<std::uint64_t> epoch{1};
};

// Published once made; nullptr until the first handle is added, when no lookup can find one.
constinit std::atomic<Table*> g_table{nullptr};

// Leaked on purpose: hosts clean up handles from atexit handlers and other libraries' destructors.
Table& table() {
  static Table* t = [] {
    auto* table = new Table();
    guard_across_fork(table->mutex);
    g_table.store(table, std::memory_order_release);
    return table;
  }();
  return *t;
}

}  // namespace

Transfer* find(CURL* easy) {
  // A host's calls on one handle come in runs (setopt, then add or perform), on one handle or on
  // the several a multi loop runs in turn. A handle is used by one thread at a time, and cleaning
  // it up while another thread uses it is undefined. 32 spare answers (768 bytes of static TLS):
  // a loop over 16 handles rarely has two in one slot.
  __attribute__((tls_model("initial-exec"))) static thread_local RememberedLookup<CURL*, Transfer*, 32> last;
  // A plain load, not the function-static's guard: every wrapper the host calls asks this.
  Table* made = g_table.load(std::memory_order_acquire);
  if (made == nullptr) return nullptr;
  Table& t = *made;
  return remembered_find(last, t.epoch, t.mutex, easy, [&t](CURL* key) -> Transfer* {
    auto it = t.transfers.find(key);
    return it == t.transfers.end() ? nullptr : it->second.get();
  });
}

Transfer* add(CURL* easy, const real::Api* api) {
  auto transfer = std::make_unique<Transfer>(easy, api);
  Transfer* raw = transfer.get();
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.transfers[easy] = std::move(transfer);
  t.epoch.fetch_add(1, std::memory_order_acq_rel);
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
  t.epoch.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace curlretry::shim::registry
