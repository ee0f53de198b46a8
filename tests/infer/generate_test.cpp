#include "swarmt/infer/generate.h"

#include <gtest/gtest.h>

namespace swarmt::infer {
namespace {

// A stream whose logits always favour the last id (a padding row past the tokenizer's vocabulary).
class PaddedVocabularyStream : public TokenStream {
 public:
  at::Tensor feed(const at::Tensor& tokens) override {
    position_ += tokens.numel();
    auto logits = at::zeros({8});
    logits[7] = 10.0;  // padding row
    logits[3] = 5.0;   // best real token
    return logits;
  }
  int64_t state_bytes() const override { return 0; }
  int64_t state_bytes_after(int64_t) const override { return 0; }
  int64_t position() const override { return position_; }
  FileDigest save(const std::string&, const std::map<std::string, std::string>&) override { return {}; }
  std::map<std::string, std::string> load(const std::string&) override { return {}; }

 private:
  int64_t position_ = 0;
};

TEST(Generate, ids_past_the_vocabulary_limit_are_never_sampled) {
  GenerateOptions options;
  options.max_new_tokens = 3;
  PaddedVocabularyStream unrestricted;
  EXPECT_EQ(generate(unrestricted, {1, 2}, options).tokens, (std::vector<int64_t>{7, 7, 7}));
  options.vocab_limit = 6;
  PaddedVocabularyStream limited;
  EXPECT_EQ(generate(limited, {1, 2}, options).tokens, (std::vector<int64_t>{3, 3, 3}));
}

// Decode speed is forward passes per second: n generated tokens take n - 1 passes after the prefill (the
// first token comes from the prompt's logits, the last is not fed back), and a stop id costs its pass.
TEST(Generate, decode_steps_count_the_forward_passes_after_the_prompt) {
  GenerateOptions options;
  options.max_new_tokens = 5;
  PaddedVocabularyStream stream;
  const GenerateResult r = generate(stream, {1, 2, 3}, options);
  EXPECT_EQ(r.tokens.size(), 5u);
  EXPECT_EQ(r.decode_steps, 4);
  EXPECT_EQ(stream.position(), 3 + 4);  // the prompt, then one token per decode pass

  options.stop_ids = {7};  // the stream always prefers 7: stop at the first sample
  PaddedVocabularyStream stopped;
  const GenerateResult s = generate(stopped, {1, 2, 3}, options);
  EXPECT_TRUE(s.tokens.empty());
  EXPECT_EQ(s.decode_steps, 0);
}

}  // namespace
}  // namespace swarmt::infer
