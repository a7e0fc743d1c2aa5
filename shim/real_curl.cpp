#include "shim/real_curl.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "elf/dynamic.h"
#include "shim/fork_guard.h"

namespace curlretry::shim::real {
namespace {

bool is_libcurl_name(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libcurl", 7) == 0 && std::strstr(base, ".so") != nullptr;
}

// Our own object: its name also starts with "libcurl", and resolving to ourselves would recurse.
ElfW(Addr) own_base() {
  static const ElfW(Addr) base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&is_libcurl_name), &info);
    return reinterpret_cast<ElfW(Addr)>(info.dli_fbase);
  }();
  return base;
}

template <typename Fn>
void take(Fn& slot, void* p) {
  if (slot == nullptr && p != nullptr) slot = reinterpret_cast<Fn>(p);
}

// Fills what is still missing in `api` with `lookup(name)`.
template <typename Lookup>
void fill(Api& api, Lookup lookup) {
  take(api.easy_init, lookup("curl_easy_init"));
  take(api.easy_setopt, lookup("curl_easy_setopt"));
  take(api.easy_perform, lookup("curl_easy_perform"));
  take(api.easy_cleanup, lookup("curl_easy_cleanup"));
  take(api.easy_reset, lookup("curl_easy_reset"));
  take(api.easy_duphandle, lookup("curl_easy_duphandle"));
  take(api.easy_getinfo, lookup("curl_easy_getinfo"));
  take(api.easy_pause, lookup("curl_easy_pause"));
  take(api.easy_header, lookup("curl_easy_header"));
  take(api.slist_free_all, lookup("curl_slist_free_all"));
  take(api.version_info, lookup("curl_version_info"));
  take(api.multi_init, lookup("curl_multi_init"));
  take(api.multi_cleanup, lookup("curl_multi_cleanup"));
  take(api.multi_add_handle, lookup("curl_multi_add_handle"));
  take(api.multi_remove_handle, lookup("curl_multi_remove_handle"));
  take(api.multi_perform, lookup("curl_multi_perform"));
  take(api.multi_poll, lookup("curl_multi_poll"));
  take(api.multi_wait, lookup("curl_multi_wait"));
  take(api.multi_info_read, lookup("curl_multi_info_read"));
  take(api.multi_socket_action, lookup("curl_multi_socket_action"));
  take(api.multi_socket, lookup("curl_multi_socket"));
  take(api.multi_socket_all, lookup("curl_multi_socket_all"));
  take(api.multi_timeout, lookup("curl_multi_timeout"));
  take(api.multi_fdset, lookup("curl_multi_fdset"));
  take(api.multi_setopt, lookup("curl_multi_setopt"));
  take(api.mime_addpart, lookup("curl_mime_addpart"));
  take(api.mime_subparts, lookup("curl_mime_subparts"));
  take(api.mime_data_cb, lookup("curl_mime_data_cb"));
  take(api.mime_free, lookup("curl_mime_free"));
}

// ---------------------------------------------------------------------------------------------
// The global scope's libcurl.

// Runs `use(handle)` with a handle on the loaded libcurl at `path`. RTLD_NOLOAD only takes a
// reference on an object that is already there. Only libcurl objects are opened this way: during
// exit, a dlopen of an object whose destructor already ran would run its constructor again, and
// a host's own libraries may have constructors that matter (libcurl has none).
template <typename Use>
void with_libcurl_handle(const char* path, Use use) {
  void* handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return;
  use(handle);
  dlclose(handle);
}

// The paths of the loaded libcurls (not us), in load order.
int find_loaded_libcurls(struct dl_phdr_info* info, size_t, void* data) {
  auto* found = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && is_libcurl_name(info->dlpi_name) && info->dlpi_addr != own_base())
    found->emplace_back(info->dlpi_name);
  return 0;
}

void* global_lookup(const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) return p;
  std::vector<std::string> libcurls;
  dl_iterate_phdr(find_loaded_libcurls, &libcurls);
  void* found = nullptr;
  for (const auto& path : libcurls) {
    with_libcurl_handle(path.c_str(), [&](void* handle) { found = dlsym(handle, name); });
    if (found != nullptr) break;
  }
  return found;
}

std::mutex& global_mutex() {
  static std::mutex& m = []() -> std::mutex& {
    static std::mutex mutex;
    guard_across_fork(mutex);
    return mutex;
  }();
  return m;
}

// ---------------------------------------------------------------------------------------------
// Which libcurl each loaded object uses, by code address.

struct Range {
  ElfW(Addr) begin;
  ElfW(Addr) end;
  const Api* api;  // nullptr: the global scope's
};

struct Table {
  unsigned long long adds = 0;
  unsigned long long subs = 0;
  std::vector<Range> ranges;  // sorted by begin

  const Range* find(ElfW(Addr) address) const {
    auto it = std::upper_bound(ranges.begin(), ranges.end(), address,
                               [](ElfW(Addr) a, const Range& r) { return a < r.begin; });
    if (it == ranges.begin()) return nullptr;
    --it;
    return address < it->end ? &*it : nullptr;
  }
};

struct LoadedObject {
  std::string name;
  ElfW(Addr) base;
  std::vector<std::pair<ElfW(Addr), ElfW(Addr)>> code;
  std::string needed_libcurl;  // the DT_NEEDED entry naming a libcurl*, if any
};

// Reads the object's dynamic section where the loader mapped it: the libcurl it links, if any.
std::string linked_libcurl(const struct dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_DYNAMIC) continue;
    const elf::LoadedSource memory;
    const elf::Dynamic dynamic = elf::loaded_dynamic(memory, info->dlpi_addr + ph.p_vaddr, info->dlpi_addr);
    char name[256];
    return elf::find_needed(memory, dynamic, "libcurl", name, sizeof name) ? name : std::string();
  }
  return {};
}

struct Snapshot {
  unsigned long long adds = 0;
  unsigned long long subs = 0;
  std::vector<LoadedObject> objects;
};

int collect_loaded_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* snapshot = static_cast<Snapshot*>(data);
  snapshot->adds = info->dlpi_adds;
  snapshot->subs = info->dlpi_subs;
  LoadedObject object{info->dlpi_name ? info->dlpi_name : "", info->dlpi_addr, {}, {}};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0)
      object.code.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (!object.code.empty() && !object.name.empty() && !is_libcurl_name(object.name.c_str()))
    object.needed_libcurl = linked_libcurl(info);
  snapshot->objects.push_back(std::move(object));
  return 0;
}

int read_counters(struct dl_phdr_info* info, size_t, void* data) {
  auto* counters = static_cast<std::pair<unsigned long long, unsigned long long>*>(data);
  *counters = {info->dlpi_adds, info->dlpi_subs};
  return 1;
}

// The current table. A plain global, not in Libraries: for_caller's hit path reads it without
// the function-static guard of libraries(). Old tables are leaked (tiny, rare).
constinit std::atomic<const Table*> g_table{nullptr};

struct Libraries {
  std::mutex mutex;
  std::vector<std::pair<ElfW(Addr), Api*>> by_base;  // leaked: handles outlive everything
};

Libraries& libraries() {
  static Libraries* l = [] {
    auto* made = new Libraries();
    guard_across_fork(made->mutex);
    return made;
  }();
  return *l;
}

const char* base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return path.c_str() + (slash == std::string::npos ? 0 : slash + 1);
}

// The Api of a loaded libcurl object, resolved from that object itself.
const Api* api_of_libcurl(Libraries& libs, const LoadedObject& libcurl) {
  for (auto& [b, api] : libs.by_base)
    if (b == libcurl.base) return api;
  Api* api = nullptr;
  with_libcurl_handle(libcurl.name.c_str(), [&](void* handle) {
    api = new Api();
    fill(*api, [handle](const char* name) { return dlsym(handle, name); });
  });
  if (api != nullptr) libs.by_base.emplace_back(libcurl.base, api);
  return api;
}

// The libcurl an object links (DT_NEEDED), or nullptr for "the global scope's".
const Api* api_of_user(Libraries& libs, const LoadedObject& object, const std::vector<LoadedObject>& all) {
  if (object.name.empty() || object.needed_libcurl.empty()) return nullptr;
  for (const auto& candidate : all) {
    if (candidate.base != own_base() && !candidate.code.empty() && !candidate.name.empty() &&
        object.needed_libcurl == base_name(candidate.name))
      return api_of_libcurl(libs, candidate);
  }
  return nullptr;
}

const Table* rebuild(Libraries& libs) {
  std::lock_guard lock(libs.mutex);
  Snapshot snapshot;
  dl_iterate_phdr(collect_loaded_object, &snapshot);
  const Table* current = g_table.load(std::memory_order_acquire);
  if (current != nullptr && current->adds == snapshot.adds && current->subs == snapshot.subs) return current;
  auto* table = new Table();
  table->adds = snapshot.adds;
  table->subs = snapshot.subs;
  for (const auto& object : snapshot.objects) {
    if (object.base == own_base() || object.code.empty()) continue;
    const Api* api = !object.name.empty() && is_libcurl_name(object.name.c_str())
                         ? api_of_libcurl(libs, object)
                         : api_of_user(libs, object, snapshot.objects);
    for (const auto& [begin, end] : object.code) table->ranges.push_back(Range{begin, end, api});
  }
  std::sort(table->ranges.begin(), table->ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  g_table.store(table, std::memory_order_release);
  return table;
}

}  // namespace

namespace {
// Published as immutable snapshots: readers never see a table being filled in. Once complete,
// the snapshot is final.
std::atomic<const Api*> g_current{nullptr};
std::atomic<bool> g_complete{false};

// The global scope's final Api, or nullptr while it may still change.
const Api* global_if_final() {
  return g_complete.load(std::memory_order_acquire) ? g_current.load(std::memory_order_acquire) : nullptr;
}
}  // namespace

const Api& global() {
  const Api* api = g_current.load(std::memory_order_acquire);
  if (api == nullptr || !g_complete.load(std::memory_order_acquire)) {
    std::lock_guard lock(global_mutex());
    api = g_current.load(std::memory_order_acquire);
    if (api != nullptr && g_complete.load(std::memory_order_acquire)) return *api;  // another thread finished it
    auto* next = api ? new Api(*api) : new Api();  // the old one is leaked: others may hold it
    fill(*next, global_lookup);
    g_current.store(next, std::memory_order_release);
    if (next->easy_init != nullptr && next->multi_init != nullptr) g_complete.store(true, std::memory_order_release);
    api = next;
  }
  return *api;
}

namespace {
// Calls come from one or two code ranges at a time (the host's, a plugin's; libcurl's own calls
// never get here): two remembered ranges per thread answer nearly all of them without a search.
struct Last {
  const Table* table;
  ElfW(Addr) begin;
  ElfW(Addr) end;
  const Api* api;  // nullptr: the global scope's, not final yet (looked up on each call)
};
constinit __attribute__((tls_model("initial-exec"))) thread_local Last last[2]{};
constinit __attribute__((tls_model("initial-exec"))) thread_local unsigned next_slot = 0;

// Everything but a remembered final answer: out of line, so that for_caller's hit path builds no
// frame (every wrapper the host calls asks it; issue 27).
__attribute__((noinline)) const Api& for_caller_slow(ElfW(Addr) address, const Table* table) {
  Libraries& libs = libraries();
  for (Last& l : last) {
    if (table == nullptr || l.table != table || address < l.begin || address >= l.end) continue;
    if (l.api != nullptr) return *l.api;
    const Api& api = global();
    l.api = global_if_final();  // remembered from now on if it will not change any more
    return api;
  }
  if (table == nullptr || table->find(address) == nullptr) {
    // Unknown code (JIT, or an object loaded since): look again only if the set of objects changed.
    std::pair<unsigned long long, unsigned long long> counters{0, 0};
    if (table != nullptr) dl_iterate_phdr(read_counters, &counters);
    if (table == nullptr || counters.first != table->adds || counters.second != table->subs) table = rebuild(libs);
  }
  const Range* r = table->find(address);
  if (r == nullptr) return global();
  // The global scope's Api is remembered too once it is final: a hit then costs no call.
  last[next_slot++ & 1] = Last{table, r->begin, r->end, r->api ? r->api : global_if_final()};
  return r->api ? *r->api : global();
}

}  // namespace

const Api& for_caller(const void* caller) {
  auto address = reinterpret_cast<ElfW(Addr)>(caller);
  const Table* table = g_table.load(std::memory_order_acquire);
  for (const Last& l : last) {
    if (table != nullptr && l.table == table && address >= l.begin && address < l.end && l.api != nullptr)
      return *l.api;
  }
  return for_caller_slow(address, table);
}

}  // namespace curlretry::shim::real
