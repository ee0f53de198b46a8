// Added tokens (tokenizer.json "added_tokens"): strings such as <bos>, <start_of_turn>, <|im_end|> that
// are cut out of the text before normalization and map straight to their ids.
//
// Matching follows Hugging Face's `added_vocabulary.rs`: leftmost-longest over the set of contents
// (an Aho-Corasick automaton there, a byte trie here), non-overlapping, left to right. For each match:
//   single_word  the match is dropped unless neither neighbour is a word character (\w);
//   lstrip       whitespace just before the match is absorbed into it (not past the previous match);
//   rstrip       whitespace just after the match is absorbed into it.
// Tokens with normalized=false are matched on the raw text, those with normalized=true on the
// normalized text, against their own normalized content.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swarmt::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool normalized = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
};

// A piece of text after added-token extraction: either plain text or one added token.
struct TextSegment {
  size_t begin = 0;
  size_t end = 0;
  int32_t added_id = -1;  // >= 0: the id of the added token this piece is
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `patterns[i]` is the string to find for `tokens[i]` (its content, or normalized content). Empty
  // patterns are ignored; for a pattern given twice the first token wins.
  AddedTokenMatcher(const std::vector<AddedToken>& tokens, const std::vector<std::string>& patterns);

  bool empty() const { return tokens_.empty(); }

  // Covers `text` with plain and added-token segments, in order (an empty text gives one empty
  // plain segment, as HF does).
  std::vector<TextSegment> split(std::string_view text) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;  // sorted by byte
    int32_t token = -1;                                       // index into tokens_ if a pattern ends here
  };
  int32_t child(int32_t node, unsigned char byte) const;
  // Longest pattern starting at `pos`: its token index and end, or -1.
  int32_t longest_match_at(std::string_view text, size_t pos, size_t& end) const;

  std::vector<Node> nodes_;
  std::vector<int32_t> root_children_ = std::vector<int32_t>(256, -1);
  std::vector<AddedToken> tokens_;
};

}  // namespace swarmt::tokenizer
