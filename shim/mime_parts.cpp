#include "shim/mime_parts.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shim/fork_guard.h"
#include "shim/reentry_guard.h"

namespace curlretry::shim::mime_parts {
namespace {

// What one transfer may keep, shared by all callback parts of its body.
struct Budget {
  std::size_t left = 0;
};

// One curl_mime_data_cb part: the program's callbacks, and what the current transfer of the
// shim's read of it. Only the thread running that transfer touches the per-transfer fields.
struct PartSource {
  PartSource(curl_mimepart* p, curl_read_callback r, curl_seek_callback sk, curl_free_callback f, void* a)
      : part(p), read_fn(r), seek_fn(sk), free_fn(f), arg(a) {}

  curl_mimepart* part;
  curl_read_callback read_fn;
  curl_seek_callback seek_fn;
  curl_free_callback free_fn;
  void* arg;

  std::shared_ptr<Budget> budget;  // set from start() to release(): a copy is kept
  bool read_called = false;  // in this transfer
  bool source_eof = false;   // the program's read returned 0: libcurl would not ask it again
  bool overflow = false;     // the copy lost data (over the budget, or a seek away from 0)
  bool armed = false;        // the next rewind is the retry's: answer it from the copy
  std::string copy;
  std::size_t pos = 0;       // reads serve copy[pos] while pos < copy.size()

  void drop_copy() {
    if (budget != nullptr) budget->left += copy.size();
    std::string().swap(copy);
    pos = 0;
  }
  // After the program's own seek succeeded: the copy starts over (meaningful only from 0).
  void restart(bool from_start) {
    drop_copy();
    source_eof = false;
    overflow = !from_start;
  }
};

struct Tree {
  std::mutex mutex;
  std::unordered_map<curl_mimepart*, curl_mime*> parent;               // curl_mime_addpart
  std::unordered_map<curl_mime*, std::vector<curl_mimepart*>> parts;   // the same, by mime
  std::unordered_map<curl_mime*, curl_mimepart*> holder;               // curl_mime_subparts
  std::unordered_set<PartSource*> sources;
  std::unordered_map<const curl_mime*, std::shared_ptr<Budget>> budgets;

  // The mime at the top of `part`'s tree: the one a program gives to CURLOPT_MIMEPOST.
  const curl_mime* root_of(curl_mimepart* part) const {
    auto p = parent.find(part);
    if (p == parent.end()) return nullptr;
    curl_mime* mime = p->second;
    for (int depth = 0; depth < 64; ++depth) {  // libcurl refuses cycles; bounded all the same
      auto h = holder.find(mime);
      if (h == holder.end()) break;
      auto up = parent.find(h->second);
      if (up == parent.end()) break;  // held by a part of libcurl's own (a handle's body)
      mime = up->second;
    }
    return mime;
  }
  std::vector<PartSource*> under(const curl_mime* root) const {
    std::vector<PartSource*> found;
    for (PartSource* s : sources)
      if (root_of(s->part) == root) found.push_back(s);
    return found;
  }
};

thread_local DuplicateWatch* t_watch = nullptr;

Tree& tree() {
  static Tree* t = [] {
    auto* made = new Tree();  // leaked: parts may be freed from atexit handlers
    guard_across_fork(made->mutex);
    return made;
  }();
  return *t;
}

extern "C" size_t source_read(char* buffer, size_t size, size_t nitems, void* arg) {
  auto* s = static_cast<PartSource*>(arg);
  const size_t want = size * nitems;
  if (s->pos < s->copy.size()) {
    const size_t n = std::min(want, s->copy.size() - s->pos);
    std::memcpy(buffer, s->copy.data() + s->pos, n);
    s->pos += n;
    return n;
  }
  if (s->source_eof) return 0;
  s->read_called = true;
  size_t r;
  {
    HostScope scope;
    r = s->read_fn(buffer, size, nitems, s->arg);
  }
  if (r == CURL_READFUNC_ABORT || r == CURL_READFUNC_PAUSE || r > want) return r;
  if (r == 0) s->source_eof = true;
  if (s->budget != nullptr && !s->overflow) {
    bool kept = false;
    if (r <= s->budget->left) {
      try {
        s->copy.append(buffer, r);
        s->budget->left -= r;
        kept = true;
      } catch (...) {
        // Out of memory: as over the bound.
      }
    }
    if (!kept) {
      s->drop_copy();
      s->overflow = true;
    }
  }
  s->pos = s->copy.size();
  return r;
}

extern "C" int source_seek(void* arg, curl_off_t offset, int origin) {
  auto* s = static_cast<PartSource*>(arg);
  const bool to_start = offset == 0 && origin == SEEK_SET;
  if (s->armed && to_start) {
    // The retry's rewind: the copy holds everything the program gave (or the program already
    // rewound, in rewind()).
    s->armed = false;
    s->pos = 0;
    return CURL_SEEKFUNC_OK;
  }
  s->armed = false;
  // libcurl's own rewind: as without the shim (no seek callback: libcurl's CANTSEEK).
  int r = CURL_SEEKFUNC_CANTSEEK;
  if (s->seek_fn != nullptr) {
    HostScope scope;
    r = s->seek_fn(s->arg, offset, origin);
  }
  if (r == CURL_SEEKFUNC_OK) s->restart(to_start);
  return r;
}

extern "C" void source_free(void* arg) {
  auto* s = static_cast<PartSource*>(arg);
  {
    Tree& t = tree();
    std::lock_guard lock(t.mutex);
    t.sources.erase(s);
    s->drop_copy();
  }
  if (s->free_fn != nullptr) {
    HostScope scope;
    s->free_fn(s->arg);
  }
  delete s;
}

}  // namespace

void added(curl_mime* mime, curl_mimepart* part) {
  Tree& t = tree();
  std::lock_guard lock(t.mutex);
  t.parent[part] = mime;
  t.parts[mime].push_back(part);
}

void nested(curl_mimepart* holder, curl_mime* subparts) {
  Tree& t = tree();
  std::lock_guard lock(t.mutex);
  t.holder[subparts] = holder;
  // Held by a part no curl_mime_addpart made: a handle's own body part, the duplicate's.
  if (t_watch != nullptr && t_watch->body_ == nullptr && t.parent.find(holder) == t.parent.end())
    t_watch->body_ = subparts;
}

DuplicateWatch::DuplicateWatch() : previous_(t_watch) { t_watch = this; }
DuplicateWatch::~DuplicateWatch() { t_watch = previous_; }

void freeing(curl_mime* mime) {
  Tree& t = tree();
  std::lock_guard lock(t.mutex);
  if (auto p = t.parts.find(mime); p != t.parts.end()) {
    for (curl_mimepart* part : p->second) t.parent.erase(part);
    t.parts.erase(p);
  }
  t.holder.erase(mime);
  t.budgets.erase(mime);
}

DataCallbacks wrap(curl_mimepart* part, curl_read_callback read, curl_seek_callback seek, curl_free_callback free,
                   void* arg) {
  DataCallbacks own{read, seek, free, arg, false};
  if (part == nullptr || read == nullptr) return own;  // libcurl empties the part
  const PartSource* copied = nullptr;
  if (read == &source_read) {
    copied = static_cast<const PartSource*>(arg);  // libcurl duplicating one of ours
  } else if (inside_libcurl()) {
    return own;  // libcurl's own parts (a form's stream parts read through the handle's callback)
  }
  auto* s = copied ? new PartSource(part, copied->read_fn, copied->seek_fn, copied->free_fn, copied->arg)
                   : new PartSource(part, read, seek, free, arg);
  {
    Tree& t = tree();
    std::lock_guard lock(t.mutex);
    try {
      t.sources.insert(s);
    } catch (...) {
      delete s;
      if (copied) return DataCallbacks{copied->read_fn, copied->seek_fn, copied->free_fn, copied->arg, false};
      return own;
    }
  }
  return DataCallbacks{&source_read, &source_seek, &source_free, s, true};
}

void unwrap(const DataCallbacks& made) {
  if (!made.wrapped) return;
  auto* s = static_cast<PartSource*>(made.arg);
  {
    Tree& t = tree();
    std::lock_guard lock(t.mutex);
    t.sources.erase(s);
  }
  delete s;
}

void start(const curl_mime* root, std::size_t limit) {
  if (root == nullptr) return;
  Tree& t = tree();
  std::lock_guard lock(t.mutex);
  std::vector<PartSource*> parts = t.under(root);
  if (parts.empty()) return;
  auto& budget = t.budgets[root];
  if (!budget) budget = std::make_shared<Budget>();
  budget->left = limit;
  for (PartSource* s : parts) {
    std::string().swap(s->copy);
    s->pos = 0;
    s->budget = budget;
    s->read_called = s->overflow = s->armed = false;
  }
}

void release(const curl_mime* root) {
  if (root == nullptr) return;
  Tree& t = tree();
  std::lock_guard lock(t.mutex);
  for (PartSource* s : t.under(root)) {
    s->drop_copy();
    s->budget.reset();
    s->armed = false;
  }
  t.budgets.erase(root);
}

bool replayable(const curl_mime* root) {
  if (root == nullptr) return true;
  Tree& t = tree();
  std::lock_guard lock(t.mutex);
  for (const PartSource* s : t.under(root))
    if (s->read_called && s->overflow && s->seek_fn == nullptr) return false;
  return true;
}

bool rewind(const curl_mime* root) {
  if (root == nullptr) return true;
  std::vector<PartSource*> parts;
  {
    Tree& t = tree();
    std::lock_guard lock(t.mutex);
    parts = t.under(root);
  }
  // The program's seek runs without our lock held: it may build or free mimes of its own.
  bool ok = true;
  for (PartSource* s : parts) {
    if (!s->read_called || !ok) continue;
    if (s->overflow) {
      int r = CURL_SEEKFUNC_CANTSEEK;
      if (s->seek_fn != nullptr) {
        HostScope scope;
        r = s->seek_fn(s->arg, 0, SEEK_SET);
      }
      if (r != CURL_SEEKFUNC_OK) {
        ok = false;
        continue;
      }
      s->restart(true);
    }
    s->armed = true;
  }
  if (!ok)
    for (PartSource* s : parts) s->armed = false;
  return ok;
}

}  // namespace curlretry::shim::mime_parts
