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

// Each returns the real function, or nullptr when no libcurl providing it is loaded.
easy_init_fn easy_init();
easy_setopt_fn easy_setopt();
easy_perform_fn easy_perform();
easy_cleanup_fn easy_cleanup();
easy_reset_fn easy_reset();
easy_duphandle_fn easy_duphandle();
easy_getinfo_fn easy_getinfo();
easy_pause_fn easy_pause();
easy_header_fn easy_header();  // libcurl >= 7.83 only

multi_init_fn multi_init();
multi_cleanup_fn multi_cleanup();
multi_add_handle_fn multi_add_handle();
multi_remove_handle_fn multi_remove_handle();
multi_perform_fn multi_perform();
multi_poll_fn multi_poll();
multi_wait_fn multi_wait();
multi_wakeup_fn multi_wakeup();
multi_info_read_fn multi_info_read();
multi_socket_action_fn multi_socket_action();
multi_socket_fn multi_socket();
multi_socket_all_fn multi_socket_all();
multi_timeout_fn multi_timeout();
multi_fdset_fn multi_fdset();
multi_setopt_fn multi_setopt();

}  // namespace curlretry::shim::real
