// curl_mime_data_cb parts, made replayable (issue 25 item 3). libcurl rewinds a MIME body at the
// start of every request (Curl_mime_rewind): a part it already read is asked to seek to 0, and a
// part without a seek callback then fails the request with CURLE_SEND_FAIL_REWIND (65). A retry
// is such a request. So the shim stands between libcurl and each callback part (its own read,
// seek and free callbacks, the program's kept in a PartSource) and, during a transfer of its
// own, keeps a bounded copy of what the program's read callback gave, exactly as UploadReplay
// does for a read-callback upload:
// - a retry's rewind is answered from the copy, and the program's seek is never asked;
// - only when the copy overflowed is the program's seek asked, before the retry is decided; a
//   part that can be neither is "not replayable": the transfer gives up and the program gets the
//   response it got (never 65);
// - libcurl's own rewinds (a redirect, an auth round, a new transfer of the program's) reach the
//   program's seek (or fail for want of one) exactly as they would without the shim.
//
// The shim cannot look inside a curl_mime, so it learns the tree from the calls that build it:
// curl_mime_addpart (part -> its mime), curl_mime_subparts (mime -> the part holding it),
// curl_mime_data_cb (the callback part), curl_mime_free (forget a mime and its parts). A
// transfer names its body by the root mime given to CURLOPT_MIMEPOST.
#pragma once

#include <curl/curl.h>

#include <cstddef>

namespace curlretry::shim::mime_parts {

// Bookkeeping, from the interposed curl_mime_* functions (shim/mime_api.cpp): after libcurl
// accepted the call, except `freeing`, before libcurl frees the mime (so that no other thread's
// new mime at the same address can lose its records).
void added(curl_mime* mime, curl_mimepart* part);
void nested(curl_mimepart* holder, curl_mime* subparts);
void freeing(curl_mime* mime);

// curl_easy_duphandle copies the handle's MIME body into a mime of libcurl's own, bound to the
// copy's body part: while a watch lives on this thread, the first such mime is noted, so that the
// copy's transfers name their own body (its parts are copies, with PartSources of their own).
class DuplicateWatch {
 public:
  DuplicateWatch();
  ~DuplicateWatch();
  DuplicateWatch(const DuplicateWatch&) = delete;
  DuplicateWatch& operator=(const DuplicateWatch&) = delete;
  const curl_mime* body() const { return body_; }

 private:
  friend void nested(curl_mimepart* holder, curl_mime* subparts);
  DuplicateWatch* previous_;
  const curl_mime* body_ = nullptr;
};

// The callbacks and argument curl_mime_data_cb should hand libcurl for the program's: ours, with
// a new PartSource as the argument, or (`wrapped` false) the program's own, unchanged. A call
// whose read function is already ours is libcurl copying a part (curl_easy_duphandle): the copy
// gets a PartSource of its own with the same program callbacks.
struct DataCallbacks {
  curl_read_callback read;
  curl_seek_callback seek;
  curl_free_callback free;
  void* arg;
  bool wrapped;
};
DataCallbacks wrap(curl_mimepart* part, curl_read_callback read, curl_seek_callback seek, curl_free_callback free,
                   void* arg);
// libcurl refused the call: the PartSource `wrap` made is dropped.
void unwrap(const DataCallbacks& made);

// One transfer of the shim's over the body `root` (CURLOPT_MIMEPOST): from `start` to `release`
// the root's callback parts keep up to `limit` bytes between them.
void start(const curl_mime* root, std::size_t limit);
void release(const curl_mime* root);
// Whether every callback part the transfer read could be sent again (asks nobody).
bool replayable(const curl_mime* root);
// Before a retry: each part read so far answers the request's rewind from its copy, or (copy
// overflowed) after the program's own seek to 0. False: some part cannot be sent again.
bool rewind(const curl_mime* root);

}  // namespace curlretry::shim::mime_parts
