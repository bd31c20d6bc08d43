// The differential HTTP fuzz target (http_diff_fuzz.cpp) in parts: the readings of a request
// by sinter and by Boost.Beast, the input as sinter frames it, and the rules that explain where
// the two differ by design (http_diff_rules.cpp; docs/RELIABILITY.md lists them).
#pragma once

#include <boost/system/error_code.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace http_diff {

constexpr size_t kHeadLimit = 1024;  // request line, headers (and sinter's trailers), bytes
constexpr size_t kBodyLimit = 512;

enum class Outcome { kIncomplete, kComplete, kError };

struct Field {
  std::string name;
  std::string value;
  bool operator==(const Field&) const = default;
};

// A request as either parser read it.
struct Message {
  std::string method;
  std::string target;
  int version = 0;  // 10, 11
  std::vector<Field> fields;
  std::string body;
  bool operator==(const Message&) const = default;
};

struct SinterReading {
  Outcome outcome = Outcome::kIncomplete;
  size_t consumed = 0;  // meaningful when complete
  size_t error_at = 0;  // on an error, the bytes taken (fed at once): past the line refused
  int status = 0;       // when an error
  std::string error;
  Message message;  // the head once it is done, all of it when complete
};

struct BeastReading {
  Outcome outcome = Outcome::kIncomplete;
  size_t consumed = 0;  // in the bytes Beast was given
  boost::system::error_code error;
  bool header_done = false;
  bool chunked = false;
  Message message;  // the head as it was when done (trailers join its fields later), the body
};

// RFC 9112 §2.2 lets a server skip empty lines before the request line and take a bare LF for
// the end of a line; sinter does both in the head, as Go's net/http and nginx do, and Beast does
// neither. Beast is given the head with the empty lines dropped and bare LFs made CRLF, so the
// rest of its judgement still counts; these are the counts to map its offsets back.
struct Normalized {
  std::string bytes;                         // for Beast
  size_t skipped = 0;                        // bytes of empty lines dropped before the request line
  size_t inserted = 0;                       // CRs added before bare LFs of the head
  std::vector<size_t> inserted_at;           // where, in `bytes`
  size_t head_end = std::string_view::npos;  // in the raw input, past the head's empty line
  std::vector<std::string_view> head_lines;  // raw, without their line ends, request line first
};

Normalized normalize_head(std::string_view raw);
// Where an offset in the normalized bytes lies in the raw input.
size_t raw_offset(const Normalized& normalized, size_t offset);

bool equals_ignoring_case(std::string_view a, std::string_view b);

// sinter refused what Beast took (its head at least): the rule that says why, or nullptr.
// `beast` read `raw` normalized as `normalized`, and its head is done.
const char* sinter_refusal_by_design(std::string_view raw, const Normalized& normalized,
                                     const SinterReading& sinter, const BeastReading& beast);
// sinter took (or waits on) what Beast refused: the rule that says why, or nullptr. The rules
// read the raw head, which sinter took so far.
const char* beast_refusal_by_design(std::string_view raw, const Normalized& normalized,
                                    const BeastReading& beast);

// Whether sinter, given the input with its line ended, refused it where Beast did: Beast stops
// at the start of the line it refuses (of the chunk, in a chunked body), sinter past the end of
// that line; or both refused for a head past its limit.
bool refused_in_the_same_place(std::string_view ended, const Normalized& normalized,
                               const BeastReading& beast, const SinterReading& sinter);

}  // namespace http_diff
