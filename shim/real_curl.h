// The real libcurl functions behind our wrappers. We never link libcurl: each function is looked
// up on first use with dlsym(RTLD_NEXT), and when that finds nothing (the host dlopen()ed
// libcurl RTLD_LOCAL, as Python extension modules do) in any libcurl*.so* already loaded.
// A lookup that fails is tried again on the next call, so a host that loads libcurl late works.
#pragma once

#include <curl/curl.h>
#include <curl/header.h>

namespace curlretry::shim::real {

using easy_init_fn = CURL* (*)();
using easy_setopt_fn = CURLcode (*)(CURL*, CURLoption, ...);
using easy_perform_fn = CURLcode (*)(CURL*);
using easy_cleanup_fn = void (*)(CURL*);
using easy_reset_fn = void (*)(CURL*);
using easy_duphandle_fn = CURL* (*)(CURL*);
using easy_pause_fn = CURLcode (*)(CURL*, int);
using easy_getinfo_fn = CURLcode (*)(CURL*, CURLINFO, ...);
using easy_header_fn = CURLHcode (*)(CURL*, const char*, size_t, unsigned int, int, struct curl_header**);
using slist_free_all_fn = void (*)(struct curl_slist*);
using version_info_fn = curl_version_info_data* (*)(CURLversion);

using multi_init_fn = CURLM* (*)();
using multi_cleanup_fn = CURLMcode (*)(CURLM*);
using multi_add_handle_fn = CURLMcode (*)(CURLM*, CURL*);
using multi_remove_handle_fn = CURLMcode (*)(CURLM*, CURL*);
using multi_perform_fn = CURLMcode (*)(CURLM*, int*);
using multi_poll_fn = CURLMcode (*)(CURLM*, struct curl_waitfd*, unsigned int, int, int*);
using multi_wait_fn = CURLMcode (*)(CURLM*, struct curl_waitfd*, unsigned int, int, int*);
using multi_wakeup_fn = CURLMcode (*)(CURLM*);
using multi_info_read_fn = CURLMsg* (*)(CURLM*, int*);
using multi_socket_action_fn = CURLMcode (*)(CURLM*, curl_socket_t, int, int*);
using multi_socket_fn = CURLMcode (*)(CURLM*, curl_socket_t, int*);
using multi_socket_all_fn = CURLMcode (*)(CURLM*, int*);
using multi_timeout_fn = CURLMcode (*)(CURLM*, long*);
using multi_fdset_fn = CURLMcode (*)(CURLM*, fd_set*, fd_set*, fd_set*, int*);
using multi_setopt_fn = CURLMcode (*)(CURLM*, CURLMoption, ...);

using mime_addpart_fn = curl_mimepart* (*)(curl_mime*);
using mime_subparts_fn = CURLcode (*)(curl_mimepart*, curl_mime*);
using mime_data_cb_fn = CURLcode (*)(curl_mimepart*, curl_off_t, curl_read_callback, curl_seek_callback,
                                     curl_free_callback, void*);
using mime_free_fn = void (*)(curl_mime*);

// One libcurl's entry points. A process may hold two (libcurl.so.4 and libcurl-gnutls.so.4, one
// per plugin): every call must reach the library its caller linked, or a handle made by one
// would be used by the other's code.
struct Api {
  easy_init_fn easy_init = nullptr;
  easy_setopt_fn easy_setopt = nullptr;
  easy_perform_fn easy_perform = nullptr;
  easy_cleanup_fn easy_cleanup = nullptr;
  easy_reset_fn easy_reset = nullptr;
  easy_duphandle_fn easy_duphandle = nullptr;
  easy_getinfo_fn easy_getinfo = nullptr;
  easy_pause_fn easy_pause = nullptr;
  easy_header_fn easy_header = nullptr;  // libcurl >= 7.83 only
  slist_free_all_fn slist_free_all = nullptr;  // for lists this libcurl allocated (CURLINFO_COOKIELIST)
  version_info_fn version_info = nullptr;  // which error texts this libcurl writes (shim/write_refusal.cpp)

  multi_init_fn multi_init = nullptr;
  multi_cleanup_fn multi_cleanup = nullptr;
  multi_add_handle_fn multi_add_handle = nullptr;
  multi_remove_handle_fn multi_remove_handle = nullptr;
  multi_perform_fn multi_perform = nullptr;
  multi_poll_fn multi_poll = nullptr;
  multi_wait_fn multi_wait = nullptr;
  multi_info_read_fn multi_info_read = nullptr;
  multi_socket_action_fn multi_socket_action = nullptr;
  multi_socket_fn multi_socket = nullptr;
  multi_socket_all_fn multi_socket_all = nullptr;
  multi_timeout_fn multi_timeout = nullptr;
  multi_fdset_fn multi_fdset = nullptr;
  multi_setopt_fn multi_setopt = nullptr;

  // The MIME calls the shim follows to make callback parts replayable (shim/mime_parts.h).
  mime_addpart_fn mime_addpart = nullptr;
  mime_subparts_fn mime_subparts = nullptr;
  mime_data_cb_fn mime_data_cb = nullptr;
  mime_free_fn mime_free = nullptr;
};

// The libcurl that code at `caller` (a return address) uses: for code inside a libcurl, that
// library; for an object that links one, the one its own dependencies provide; otherwise the
// one the global scope provides. Cheap: an immutable table of code ranges, rebuilt only when
// objects were loaded or unloaded since.
const Api& for_caller(const void* caller);

// The global scope's libcurl (dlsym(RTLD_NEXT), else any loaded libcurl*.so*). Functions not
// found stay nullptr; a later call looks again, so a host that loads libcurl late works.
const Api& global();

}  // namespace curlretry::shim::real
