// Saved streaming states (models/model_state_file.h): a state written to a file and loaded into a fresh
// stream continues exactly as the original, for every kind of state (KV ring, growing KV cache, mLSTM,
// Gated DeltaNet with its convolutions, ARMT memories mid-segment); its size does not grow with the
// tokens read when the state does not; anything changed in the file, or a file of another model, is
// refused by name.
#include "swarmt/models/model_state_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "swarmt/infer/token_stream.h"
#include "swarmt/models/armt_model.h"
#include "swarmt/models/registry.h"
#include "bad_input.h"
#include "swarmt/core/safetensors_torch.h"
#include "test_util.h"

namespace swarmt::models {
namespace {

using swarmt::testing::bad_input_message;
using swarmt::testing::TempDir;

Json state_test_swax(const std::string& pattern) {
  return Json{{"model_type", "swax"},  {"vocab_size", 37},  {"hidden_size", 24}, {"layer_pattern", pattern},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6}, {"sliding_window", 5},
              {"mlstm_num_heads", 2},  {"mlstm_qk_head_dim", 6}, {"mlstm_v_head_dim", 12}, {"mlstm_chunk_size", 4},
              {"intermediate_size", 40}, {"bos_token_id", 1}, {"eos_token_id", 2}, {"pad_token_id", 0}};
}

Json state_test_llama() {
  return Json{{"model_type", "llama"}, {"hidden_size", 24},     {"num_hidden_layers", 2},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6},
              {"intermediate_size", 40}, {"vocab_size", 37},  {"rms_norm_eps", 1e-5},
              {"tie_word_embeddings", true}, {"bos_token_id", 1}, {"eos_token_id", 2}};
}

std::shared_ptr<CausalLM> state_test_model(const Json& config) {
  torch::manual_seed(7);
  auto model = create_model(config, "config.json");
  at::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.add_(at::randn_like(p) * 0.1);
  return model;
}

// separate_write_pass: the stream keeps a second segment state, the write pass's.
std::shared_ptr<CausalLM> state_test_armt(bool separate_write_pass = false) {
  auto armt = std::make_shared<ArmtModel>(
      state_test_model(state_test_llama()),
      ArmtConfig::from_json(Json{{"segment_size", 6}, {"num_memory_tokens", 3}, {"d_mem", 4}, {"memory_layers", "all"},
                                 {"memory_tokens_read", !separate_write_pass},
                                 {"separate_write_pass", separate_write_pass}, {"seed", 3}},
                            "armt.json"));
  at::NoGradGuard no_grad;
  torch::manual_seed(11);
  for (auto& [name, p] : armt->adapter_tensors()) p.copy_(at::randn_like(p) * 0.3);  // W_v starts at zero
  return armt;
}

at::Tensor state_test_tokens(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  return at::randint(3, 37, {n}, at::TensorOptions().dtype(at::kLong));
}

struct NamedModel {
  std::string name;
  std::shared_ptr<CausalLM> model;
};

std::vector<NamedModel> every_kind_of_state() {
  return {{"swax mLSTM + SWA ring", state_test_model(state_test_swax("MS"))},
          {"swax Gated DeltaNet + SWA ring", state_test_model(state_test_swax("GS"))},
          {"llama growing KV cache", state_test_model(state_test_llama())},
          {"armt over llama", state_test_armt()},
          {"armt with a separate write pass", state_test_armt(/*separate_write_pass=*/true)}};
}

TEST(ModelStateFile, a_loaded_state_continues_exactly_like_the_original) {
  TempDir tmp;
  for (const auto& [name, model] : every_kind_of_state()) {
    SCOPED_TRACE(name);
    // 13 tokens: past the SWA window (5), the mLSTM chunk (4), and two ARMT segments of 6 plus one.
    infer::CausalLMStream original(model, /*prefill_chunk=*/4);
    original.feed(state_test_tokens(13, 1));
    original.save(tmp.file("state"), {{"note", "kept"}});

    infer::CausalLMStream resumed(model, 4);
    const auto user = resumed.load(tmp.file("state"));
    EXPECT_EQ(user.at("note"), "kept");
    EXPECT_EQ(resumed.position(), 13);
    EXPECT_EQ(resumed.state_bytes(), original.state_bytes());
    for (uint64_t step = 0; step < 3; ++step) {
      const at::Tensor next = state_test_tokens(5, 10 + step);
      EXPECT_TRUE(at::equal(resumed.feed(next), original.feed(next))) << "after piece " << step;
    }
  }
}

TEST(ModelStateFile, a_fixed_size_state_saves_to_the_same_size_whatever_it_read) {
  TempDir tmp;
  auto model = state_test_model(state_test_swax("MS"));
  infer::CausalLMStream short_read(model, 64), long_read(model, 64);
  short_read.feed(state_test_tokens(10, 1));
  long_read.feed(state_test_tokens(3000, 2));
  const FileDigest a = short_read.save(tmp.file("short")), b = long_read.save(tmp.file("long"));
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.sha256, b.sha256);
  EXPECT_EQ(a.bytes, std::filesystem::file_size(tmp.file("short")));
}

TEST(ModelStateFile, one_changed_byte_is_refused_by_the_checksum_and_the_state_is_unchanged) {
  TempDir tmp;
  auto model = state_test_model(state_test_swax("MS"));
  infer::CausalLMStream stream(model, 64);
  stream.feed(state_test_tokens(9, 1));
  const std::string path = tmp.file("state");
  stream.save(path);
  const auto size = std::filesystem::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 3));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.write(&c, 1);
  }
  infer::CausalLMStream other(model, 64);
  other.feed(state_test_tokens(4, 3));
  const std::string message = bad_input_message([&] { other.load(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("checksum"), std::string::npos) << message;
  EXPECT_EQ(other.position(), 4);  // a refused file leaves the stream as it was
}

TEST(ModelStateFile, a_state_of_another_model_or_not_a_state_is_refused_by_name) {
  TempDir tmp;
  auto swax = state_test_model(state_test_swax("MS"));
  auto llama = state_test_model(state_test_llama());
  infer::CausalLMStream stream(swax, 64);
  stream.feed(state_test_tokens(9, 1));
  stream.save(tmp.file("swax.state"));
  infer::CausalLMStream wrong(llama, 64);
  EXPECT_NE(bad_input_message([&] { wrong.load(tmp.file("swax.state")); }).find("another configuration"), std::string::npos);
  // A model checkpoint is a safetensors file too, but not a state.
  save_safetensors(tmp.file("weights.safetensors"), {{"w", at::ones({2})}});
  EXPECT_NE(bad_input_message([&] { wrong.load(tmp.file("weights.safetensors")); }).find("not a swarmt state file"),
            std::string::npos);
  EXPECT_NE(bad_input_message([&] { wrong.load(tmp.file("missing.state")); }).find("missing.state"), std::string::npos);
}

}  // namespace
}  // namespace swarmt::models
