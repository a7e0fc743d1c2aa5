// Every config mistake is an error naming file:line:col (1-based) and the key, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::error_of;
using testing::load_yaml;

TEST(YamlErrors, UnknownKeyOnLine3SuggestsTheClosestKey) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attemps: 3\n"),
            "test.yaml:3:3: defaults.max_attemps: unknown key; did you mean \"max_attempts\"?");
}

TEST(YamlErrors, UnknownKeyFarFromAnyListsTheKnownOnes) {
  EXPECT_EQ(error_of("version: 1\nsettings:\n  zzzzzzzz: 1\n"),
            "test.yaml:3:3: settings.zzzzzzzz: unknown key (known keys here: disable, log, log_file, events_file, "
            "max_upload_replay, max_error_body, persistent, heartbeat_ms)");
}

TEST(YamlErrors, UnknownKeysInEverySection) {
  EXPECT_EQ(error_of("version: 1\nversoin: 1\n"), "test.yaml:2:1: versoin: unknown key; did you mean \"version\"?");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: {base: 1}\n"),
            "test.yaml:3:13: defaults.backoff.base: unknown key; did you mean \"base_ms\"?");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - name: a\n    match: {hots: x}\n"),
            "test.yaml:4:13: rules[0].match.hots: unknown key; did you mean \"host\"?");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on: {statuses: [500]}\n"),
            "test.yaml:3:14: defaults.retry_on.statuses: unknown key; did you mean \"status\"?");
}

TEST(YamlErrors, WrongTypes) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: three\n"),
            "test.yaml:3:17: defaults.max_attempts: \"three\" is not an integer (expected -1 for unlimited, or a "
            "number >= 1)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: \"3\"\n"),
            "test.yaml:3:17: defaults.max_attempts: expected an integer (-1 for unlimited, or a number >= 1), got a "
            "quoted string");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: [3]\n"),
            "test.yaml:3:17: defaults.max_attempts: expected an integer (-1 for unlimited, or a number >= 1), got a "
            "list");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts:\n"),
            "test.yaml:3:3: defaults.max_attempts: expected an integer (-1 for unlimited, or a number >= 1), got "
            "nothing (null)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: 5\n"),
            "test.yaml:3:12: defaults.backoff: expected a map, got a scalar");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_after: {honor: maybe}\n"),
            "test.yaml:3:24: defaults.retry_after.honor: expected true or false, got \"maybe\"");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on: {status: 503}\n"),
            "test.yaml:3:22: defaults.retry_on.status: expected a list of HTTP status codes, got a scalar");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on: {body_markers: [[a]]}\n"),
            "test.yaml:3:29: defaults.retry_on.body_markers[0]: expected a string, got a list");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_elapsed_ms: 1.5\n"),
            "test.yaml:3:19: defaults.max_elapsed_ms: \"1.5\" is not an integer (expected milliseconds)");
  EXPECT_EQ(error_of("version: 1\nrules: {name: x}\n"),
            "test.yaml:2:8: rules: expected a list of rules (each item starts with `- name:`), got a map");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - 5\n"), "test.yaml:3:5: rules[0]: expected a map, got a scalar");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  codes: 5\n"),
            "test.yaml:3:10: defaults.codes: expected a map {path, retry, permanent} or a list of them, got a scalar");
}

TEST(YamlErrors, NegativeDelaysAreRefused) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff:\n    base_ms: -10\n"),
            "test.yaml:4:14: defaults.backoff.base_ms: a delay cannot be negative (-10)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_after: {max_ms: -1}\n"),
            "test.yaml:3:25: defaults.retry_after.max_ms: a delay cannot be negative (-1)");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - backoff: {max_ms: -5}\n"),
            "test.yaml:3:23: rules[0].backoff.max_ms: a delay cannot be negative (-5)");
}

TEST(YamlErrors, HugeNumbersAreErrorsNotOverflow) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: {base_ms: 99999999999999999999999}\n"),
            "test.yaml:3:22: defaults.backoff.base_ms: \"99999999999999999999999\" is too large (expected "
            "milliseconds)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: {max_ms: 9999999999999}\n"),
            "test.yaml:3:21: defaults.backoff.max_ms: 9999999999999 ms is too large (at most 2592000000 = 30 days)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: 4294967297\n"),
            "test.yaml:3:17: defaults.max_attempts: 4294967297 is out of range (expected -1 for unlimited, or a "
            "number >= 1)");
}

TEST(YamlErrors, MaxAttemptsZeroOrBelowMinusOne) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: 0\n"),
            "test.yaml:3:17: defaults.max_attempts: 0 is out of range (expected -1 for unlimited, or a number >= 1; "
            "1 = never retry)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: -2\n"),
            "test.yaml:3:17: defaults.max_attempts: -2 is out of range (expected -1 for unlimited, or a number >= 1)");
  EXPECT_TRUE(load_yaml("version: 1\ndefaults:\n  max_attempts: -1\n").ok());
}

TEST(YamlErrors, StatusOutside100To599) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on:\n    status: [500, 600]\n"),
            "test.yaml:4:19: defaults.retry_on.status[1]: 600 is out of range (expected an HTTP status, 100..599)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on: {status: [99]}\n"),
            "test.yaml:3:23: defaults.retry_on.status[0]: 99 is out of range (expected an HTTP status, 100..599)");
}

TEST(YamlErrors, UnknownNamesSuggestTheClosest) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: {strategy: exponentail}\n"),
            "test.yaml:3:23: defaults.backoff.strategy: unknown strategy \"exponentail\" (expected exponential, "
            "triangular or constant); did you mean \"exponential\"?");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: {jitter: ful}\n"),
            "test.yaml:3:21: defaults.backoff.jitter: unknown jitter \"ful\" (expected none, full, equal or "
            "decorrelated); did you mean \"full\"?");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on: {transport: [rest]}\n"),
            "test.yaml:3:26: defaults.retry_on.transport[0]: unknown transport error \"rest\" (expected "
            "connect_refused, reset, send, recv, empty_reply, tls_handshake, http2_stream, timeout or other); did "
            "you mean \"reset\"?");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  retry_on: {transport: [host_abort]}\n"),
            "test.yaml:3:26: defaults.retry_on.transport[0]: \"host_abort\" is never retried (expected "
            "connect_refused, reset, send, recv, empty_reply, tls_handshake, http2_stream, timeout or other)");
  EXPECT_EQ(error_of("version: 1\nsettings: {log: verbose}\n"),
            "test.yaml:2:17: settings.log: unknown log level \"verbose\" (expected off, error, warn, info or debug)");
}

TEST(YamlErrors, BadGlobs) {
  EXPECT_EQ(error_of("version: 1\nrules:\n  - match: {host: \"api.[z\"}\n"),
            "test.yaml:3:19: rules[0].match.host: bad glob \"api.[z\": unclosed '[' at offset 4");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - match:\n      path: \"/v[9-1]/*\"\n"),
            "test.yaml:4:13: rules[0].match.path: bad glob \"/v[9-1]/*\": reversed range '9-1' at offset 2");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - match: {host: \"https://api.z.ai\"}\n"),
            "test.yaml:3:19: rules[0].match.host: \"https://api.z.ai\" is not a host name (no scheme or path; use "
            "`path:` for paths)");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - match: {path: \"api/*\"}\n"),
            "test.yaml:3:19: rules[0].match.path: \"api/*\" never matches: paths start with '/'");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - match: {method: \"PO ST\"}\n"),
            "test.yaml:3:21: rules[0].match.method: \"PO ST\" is not an HTTP method (such as GET or POST)");
}

TEST(YamlErrors, VersionIsRequiredAndMustBeOne) {
  EXPECT_EQ(error_of("defaults: {}\n"), "test.yaml:1:1: version: missing; put `version: 1` at the top of the file");
  EXPECT_EQ(error_of("version: 2\n"),
            "test.yaml:1:10: version: unsupported version 2 (this curlretry reads version 1)");
  EXPECT_EQ(error_of("version: \"1\"\n"),
            "test.yaml:1:10: version: expected an integer (1), got a quoted string");
}

TEST(YamlErrors, DocumentMustBeOneMap) {
  EXPECT_EQ(error_of(""), "test.yaml:1:1: the file is empty; a config needs at least `version: 1`");
  EXPECT_EQ(error_of("# only a comment\n"), "test.yaml:1:1: the file is empty; a config needs at least `version: 1`");
  EXPECT_EQ(error_of("- version: 1\n"),
            "test.yaml:1:1: expected a map at the top level (starting with `version: 1`), got a list");
  EXPECT_EQ(error_of("just text\n"),
            "test.yaml:1:1: expected a map at the top level (starting with `version: 1`), got a scalar");
  EXPECT_EQ(error_of("version: 1\n---\nversion: 1\n"),
            "test.yaml:3:1: only one YAML document is allowed (found a second one)");
}

TEST(YamlErrors, DuplicateKeysNameBothLines) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: 2\n  max_attempts: 3\n"),
            "test.yaml:4:3: defaults.max_attempts: duplicate key (first defined at line 3)");
  EXPECT_EQ(error_of("version: 1\nversion: 1\n"), "test.yaml:2:1: version: duplicate key (first defined at line 1)");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - name: a\n  - name: b\n    backoff: {base_ms: 1, base_ms: 2}\n"),
            "test.yaml:5:27: rules[1].backoff.base_ms: duplicate key (first defined at line 5)");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - name: a\n  - name: a\n"),
            "test.yaml:4:11: rules[1].name: duplicate rule name \"a\"");
}

TEST(YamlErrors, SyntaxErrorsCarryThePosition) {
  EXPECT_EQ(error_of("version: 1\ndefaults: [\n"), "test.yaml:3:1: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  backoff: {base_ms: 1\n"),
            "test.yaml:4:1: invalid YAML: end of map flow not found");
  const std::string tab = error_of("version: 1\ndefaults:\n\tmax_attempts: 3\n");
  EXPECT_EQ(tab.rfind("test.yaml:3:", 0), 0u) << tab;
}

TEST(YamlErrors, AnchorsAndAliasesAreRefused) {
  EXPECT_EQ(error_of("version: 1\nx: &a [1]\n"),
            "test.yaml:2:4: anchors (&name) are not supported in curlretry config");
  // The billion-laughs shape: refused at the first anchor, before any expansion.
  std::string bomb = "version: 1\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev +
            ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n";
  }
  EXPECT_EQ(error_of(bomb), "test.yaml:2:4: anchors (&name) are not supported in curlretry config");
  // An alias to an undefined anchor is a syntax error, reported too.
  EXPECT_FALSE(load_yaml("version: 1\ndefaults: *nothing\n").ok());
}

TEST(YamlErrors, TagsAreRefused) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  max_attempts: !!int 3\n"),
            "test.yaml:3:17: YAML tags (tag:yaml.org,2002:int) are not supported in curlretry config");
}

TEST(YamlErrors, InvalidUtf8AndNulBytes) {
  EXPECT_EQ(error_of("version: 1\nrules:\n  - name: \"caf\xe9\"\n"),
            "test.yaml:3:15: invalid UTF-8 (the file must be UTF-8 text)");
  EXPECT_EQ(error_of("version: 1\nx: \"\xc0\xaf\"\n"), "test.yaml:2:5: invalid UTF-8 (the file must be UTF-8 text)");
  EXPECT_EQ(error_of("version: 1\nx: \"\xed\xa0\x80\"\n"),
            "test.yaml:2:5: invalid UTF-8 (the file must be UTF-8 text)");
  EXPECT_EQ(error_of(std::string("version: 1\nx: \"a", 16) + std::string(1, '\0') + "\"\n"),
            "test.yaml:2:6: the file contains a NUL byte");
}

TEST(YamlErrors, ColumnsCountCharactersNotBytes) {
  EXPECT_EQ(error_of("version: 1\ndefaults: {never_retry: {body_markers: [\"风控\"]}, max_attemps: 1}\n"),
            "test.yaml:2:49: defaults.max_attemps: unknown key; did you mean \"max_attempts\"?");
  EXPECT_EQ(error_of("\xef\xbb\xbfversion: 2\n"),
            "test.yaml:1:10: version: unsupported version 2 (this curlretry reads version 1)");
}

TEST(YamlErrors, HostileSizesAndNesting) {
  EXPECT_EQ(error_of(std::string(1024 * 1024 + 1, '#')),
            "test.yaml: file is larger than 1024 KiB; refusing to parse it");
  const std::string deep = "version: 1\nx: " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  EXPECT_EQ(error_of(deep), "test.yaml:2:67: nesting is deeper than 64 levels");
}

TEST(YamlErrors, CodesTablesAreChecked) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  codes: {retry: [\"1\"]}\n"),
            "test.yaml:3:10: defaults.codes.path: missing; say where the code is, e.g. `path: error.code`");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  codes: {path: \"error..code\", retry: [\"1\"]}\n"),
            "test.yaml:3:17: defaults.codes.path: \"error..code\" is not a dotted path such as error.code");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  codes: [{path: code}]\n"),
            "test.yaml:3:11: defaults.codes[0]: needs at least one value under retry or permanent");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  codes: {path: code, retry: [\"1\"], permanent: [1]}\n"),
            "test.yaml:3:10: defaults.codes: code \"1\" is listed under both retry and permanent");
}

TEST(YamlErrors, EmptyMarkersWouldMatchEverything) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  never_retry: {body_markers: [\"\"]}\n"),
            "test.yaml:3:32: defaults.never_retry.body_markers[0]: must not be empty");
}

TEST(YamlErrors, ReservedAndEmptyRuleNames) {
  EXPECT_EQ(error_of("version: 1\nrules:\n  - name: defaults\n"),
            "test.yaml:3:11: rules[0].name: \"defaults\" is reserved; pick another name");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - name: \"\"\n"), "test.yaml:3:11: rules[0].name: must not be empty");
}

TEST(YamlErrors, ErrorsUseTheGivenFileName) {
  const LoadResult r = load_from_string("version: 1\ndefaults:\n  max_attemps: 3\n", "/etc/curlretry/x.yaml",
                                        testing::FakeEnv{}.env());
  EXPECT_EQ(r.error.rfind("/etc/curlretry/x.yaml:3:3: ", 0), 0u) << r.error;
}

}  // namespace
}  // namespace curlretry::config
