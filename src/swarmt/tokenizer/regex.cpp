#define PCRE2_CODE_UNIT_WIDTH 8
#include "swarmt/tokenizer/regex.h"

#include <pcre2.h>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace swarmt::tokenizer {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  int n = pcre2_get_error_message(code, buffer, sizeof(buffer));
  return n < 0 ? "error " + std::to_string(code) : std::string(reinterpret_cast<const char*>(buffer));
}

// Per-thread scratch: match data (one ovector pair is all we read) and a JIT stack large enough for
// patterns such as \s+(?!\S) on long runs of whitespace (the default 32 KiB machine stack is not).
struct ThreadScratch {
  pcre2_match_data* match_data = nullptr;
  pcre2_match_context* match_context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  ThreadScratch() {
    match_data = pcre2_match_data_create(1, nullptr);
    match_context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
    if (match_context && jit_stack) pcre2_jit_stack_assign(match_context, nullptr, jit_stack);
  }
  ~ThreadScratch() {
    pcre2_match_data_free(match_data);
    pcre2_match_context_free(match_context);
    pcre2_jit_stack_free(jit_stack);
  }
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;
};

ThreadScratch& thread_scratch() {
  thread_local ThreadScratch scratch;
  return scratch;
}

}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, const std::string& what) : pattern_(pattern), what_(what) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                                   &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    throw_input_error(what, ": invalid regular expression ", json_preview(Json(pattern)), ": ",
                      pcre2_message(error_code), " at offset ", error_offset);
  }
  auto compiled = std::make_shared<Compiled>();
  compiled->code = code;
  // JIT is an optimisation only: if this PCRE2 build has no JIT, pcre2_match interprets the pattern.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  compiled_ = std::move(compiled);
}

void Regex::find_all(std::string_view text, std::vector<ByteRange>& out) const {
  ThreadScratch& scratch = thread_scratch();
  SWARMT_CHECK(scratch.match_data != nullptr && scratch.match_context != nullptr, "PCRE2 allocation failed");
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  uint32_t options = PCRE2_NO_UTF_CHECK;  // callers validate UTF-8 once for the whole input
  while (start <= text.size()) {
    int rc =
        pcre2_match(compiled_->code, subject, text.size(), start, options, scratch.match_data, scratch.match_context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      throw_input_error(what_, ": regular expression ", json_preview(Json(pattern_)),
                        " failed on the input: ", pcre2_message(rc));
    }
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.match_data);
    size_t begin = ovector[0], end = ovector[1];
    out.emplace_back(begin, end);
    start = end;
    options = PCRE2_NO_UTF_CHECK | (begin == end ? PCRE2_NOTEMPTY_ATSTART : 0);
  }
}

}  // namespace swarmt::tokenizer
