// Inputs that used to end as "internal" errors, with files left behind or the wrong thing named: token
// ids beyond the vocabulary, file-system errors, prompt and config messages, and the debris of killed or
// refused writers.
#include <signal.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "cli/tiny_run.h"
#include "core/file_helpers.h"
#include "crash_safety/kill_harness.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::run_swarmt;

struct InputErrorsCli : ::testing::Test {
  void SetUp() override {
    testing::write_file(tmp.file("model.json"), testing::tiny_swax_model());
    auto r = run_swarmt("model init " + tmp.file("model.json") + " --out " + model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string model() const { return tmp.file("model"); }
  // A token file whose token at offset 100 is 70000, far outside the 259 ids its sidecar declares.
  std::string token_file_with_a_bad_id() const {
    std::string text;
    for (int i = 0; i < 50; ++i) text += R"({"text": "a document about cats and mats, number )" + std::to_string(i) + "\"}\n";
    testing::write_file(tmp.file("docs.jsonl"), text);
    auto r = run_swarmt("-q data prepare --input " + tmp.file("docs.jsonl") + " --out " + tmp.file("corpus") +
                        " --validation-fraction 0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string tokens = testing::slurp(tmp.file("corpus.tokens"));
    const uint32_t bad = 70000;
    std::memcpy(&tokens[4 * 100], &bad, 4);
    testing::write_file(tmp.file("corpus.tokens"), tokens);
    return tmp.file("corpus.json");
  }
  testing::TempDir tmp;
};

TEST_F(InputErrorsCli, token_ids_outside_the_vocabulary_are_refused_naming_file_and_offset) {
  const std::string data = token_file_with_a_bad_id();
  const std::string expected = tmp.file("corpus.tokens") + ": the token at offset 100 (byte 400) is 70000, outside the "
                                                           "vocabulary of 259 ids";
  Json config = testing::tiny_train_config(2);
  config["data"] = {{"train", {{"type", "tokens"}, {"path", data}}}};
  testing::write_file(tmp.file("train.json"), config.dump());
  auto train = testing::run_train(tmp.file("train.json"), tmp.file("run"));
  EXPECT_EQ(train.exit_code, 2);
  EXPECT_NE(train.err.find(expected), std::string::npos) << train.err;
  EXPECT_FALSE(fs::exists(tmp.file("run"))) << "a refused train leaves no files";

  auto ppl = run_swarmt("-q eval ppl --model " + model() + " --data " + data + " --length 64 --windows 2 --out " +
                        tmp.file("ppl"));
  EXPECT_EQ(ppl.exit_code, 2);
  EXPECT_NE(ppl.err.find(expected), std::string::npos) << ppl.err;
  EXPECT_FALSE(fs::exists(tmp.file("ppl")));
}

TEST_F(InputErrorsCli, file_system_errors_exit_2_naming_the_path) {
  fs::create_symlink(tmp.file("loop"), tmp.file("loop"));  // a symlink loop
  auto looped = run_swarmt("generate --model " + tmp.file("loop") + " --prompt x -n 1");
  EXPECT_EQ(looped.exit_code, 2) << looped.err;
  EXPECT_NE(looped.err.find("error: " + tmp.file("loop")), std::string::npos) << looped.err;
  EXPECT_NE(looped.err.find("Too many levels of symbolic links"), std::string::npos) << looped.err;

  fs::copy(model(), tmp.file("looped_tokenizer"));
  fs::remove(tmp.file("looped_tokenizer/tokenizer.json"));
  fs::create_symlink(tmp.file("looped_tokenizer/tokenizer.json"), tmp.file("looped_tokenizer/tokenizer.json"));
  auto tokenizer = run_swarmt("generate --model " + tmp.file("looped_tokenizer") + " --prompt x -n 1");
  EXPECT_EQ(tokenizer.exit_code, 2) << tokenizer.err;
  EXPECT_NE(tokenizer.err.find(tmp.file("looped_tokenizer/tokenizer.json")), std::string::npos) << tokenizer.err;

  testing::write_file(tmp.file("armt.json"), R"({"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8})");
  testing::write_file(tmp.file("a_file"), "not a directory");
  auto init = run_swarmt("armt init --base " + model() + " --config " + tmp.file("armt.json") + " --out " +
                         tmp.file("a_file"));
  EXPECT_EQ(init.exit_code, 2) << init.err;
  EXPECT_NE(init.err.find("error: --out: " + tmp.file("a_file") + " exists and is not a directory"), std::string::npos)
      << init.err;
  EXPECT_EQ(testing::slurp(tmp.file("a_file")), "not a directory");
}

TEST_F(InputErrorsCli, prompt_errors_name_the_option_and_the_file) {
  auto empty = run_swarmt("generate --model " + model() + " --prompt '' -n 1");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("error: --prompt is empty: give the text to continue"), std::string::npos) << empty.err;

  auto empty_text = run_swarmt("forward --model " + model() + " --text '' --out " + tmp.file("logits.safetensors"));
  EXPECT_EQ(empty_text.exit_code, 2);
  EXPECT_NE(empty_text.err.find("error: --text is empty: give the text to run"), std::string::npos) << empty_text.err;
  EXPECT_FALSE(fs::exists(tmp.file("logits.safetensors")));

  fs::create_directory(tmp.file("prompts"));
  auto directory = run_swarmt("generate --model " + model() + " --prompt-file " + tmp.file("prompts") + " -n 1");
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_NE(directory.err.find("error: " + tmp.file("prompts") + ": is a directory, not a file"), std::string::npos)
      << directory.err;

  testing::write_file(tmp.file("latin1.txt"), "caf\xe9 au lait");
  auto latin1 = run_swarmt("generate --model " + model() + " --prompt-file " + tmp.file("latin1.txt") + " -n 1");
  EXPECT_EQ(latin1.exit_code, 2);
  EXPECT_NE(latin1.err.find("error: --prompt-file " + tmp.file("latin1.txt") +
                            " is not valid UTF-8 (bad byte 0xE9 at byte offset 3)"),
            std::string::npos)
      << latin1.err;
}

TEST_F(InputErrorsCli, a_config_that_is_not_utf8_is_named_without_echoing_its_bytes) {
  testing::write_file(tmp.file("latin1.json"), "{\"model\": \"caf\xe9\"}");
  auto r = testing::run_train(tmp.file("latin1.json"), tmp.file("run"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: " + tmp.file("latin1.json") + ": not valid JSON"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\xe9'), std::string::npos) << "the raw byte is shown as \\xe9, not echoed";
  EXPECT_NE(r.err.find("\\xe9"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("run")));
}

TEST_F(InputErrorsCli, data_prepare_removes_leftovers_of_killed_runs_and_a_refused_run_leaves_none) {
  testing::write_file(tmp.file("docs.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
  const std::string dead_tokens = tmp.file("corpus.tokens.tmp-2147483647");  // no such pid: its writer is gone
  const std::string dead_sidecar = tmp.file("corpus.json.tmp-2147483647");
  testing::write_file(dead_tokens, std::string(4096, 'x'));
  testing::write_file(dead_sidecar, "{");
  auto r = run_swarmt("-q data prepare --input " + tmp.file("docs.jsonl") + " --out " + tmp.file("corpus") +
                      " --validation-fraction 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dead_tokens));
  EXPECT_FALSE(fs::exists(dead_sidecar));

  fs::create_directory(tmp.file("out"));
  testing::write_file(tmp.file("out/blank.jsonl"), "{\"text\": \"   \"}\n");
  auto refused = run_swarmt("-q data prepare --input " + tmp.file("out/blank.jsonl") + " --out " + tmp.file("out/c") +
                            " --validation-fraction 0.5");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(testing::entries_of(tmp.file("out")), std::vector<std::string>{"blank.jsonl"}) << "no temporary files";

  fs::create_directory(tmp.file("out/c.json"));  // where the sidecar goes: refused before tokenizing
  auto blocked = run_swarmt("-q data prepare --input " + tmp.file("docs.jsonl") + " --out " + tmp.file("out/c"));
  EXPECT_EQ(blocked.exit_code, 2) << blocked.err;
  EXPECT_NE(blocked.err.find(tmp.file("out/c.json") + " is a directory"), std::string::npos) << blocked.err;
  EXPECT_EQ(testing::entries_of(tmp.file("out")), (std::vector<std::string>{"blank.jsonl", "c.json"}));
}

TEST_F(InputErrorsCli, armt_init_killed_anywhere_leaves_no_partial_adapter_under_its_name) {
  testing::write_file(tmp.file("base.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "vocab_size": 259})");
  ASSERT_EQ(run_swarmt("model init " + tmp.file("base.json") + " --out " + tmp.file("base")).exit_code, 0);
  testing::write_file(tmp.file("armt.json"), R"({"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8})");
  const std::string binary = SWARMT_BINARY, base = tmp.file("base");
  auto init_argv = [&](const std::string& out) {
    return std::vector<std::string>{binary, "--threads", "1", "armt", "init", "--base", base, "--config",
                                    tmp.file("armt.json"), "--out", out};
  };
  auto counted = testing::run_shell("SWARMT_TEST_KILL_AT=report '" + binary + "' --threads 1 armt init --base " + base +
                                    " --config " + tmp.file("armt.json") + " --out " + tmp.file("counted"));
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  const auto marker = counted.err.find("swarmt: ");
  ASSERT_NE(marker, std::string::npos) << counted.err;
  const int64_t total = std::stoll(counted.err.substr(marker + 8));
  ASSERT_GE(total, 4);
  int64_t complete = 0;
  for (int64_t kill_at = 1; kill_at <= total; ++kill_at) {
    const std::string context = "SWARMT_TEST_KILL_AT=" + std::to_string(kill_at);
    const std::string out = tmp.file("adapter" + std::to_string(kill_at));
    const auto killed = testing::wait_child(testing::spawn_command(init_argv(out), {{"SWARMT_TEST_KILL_AT",
                                                                                     std::to_string(kill_at)}}));
    ASSERT_EQ(killed.signal, SIGKILL) << context;
    // Killed before the rename: nothing under the name; after it: the whole adapter.
    if (fs::exists(out)) {
      EXPECT_TRUE(fs::exists(out + "/armt_config.json")) << context;
      ++complete;
      continue;
    }
    const auto again = testing::run_swarmt("armt init --base " + base + " --config " + tmp.file("armt.json") +
                                           " --out " + out);
    ASSERT_EQ(again.exit_code, 0) << context << ": " << again.err;
    EXPECT_TRUE(fs::exists(out + "/armt_config.json")) << context;
  }
  EXPECT_EQ(complete, 1) << "only a kill after the rename into place (the last kill point) leaves the adapter";
  // Every killed writer's hidden directory was removed by the run that wrote the same output after it.
  for (const auto& name : testing::entries_of(tmp.path()))
    EXPECT_EQ(name.find(".adapter"), std::string::npos) << name;
}

}  // namespace
}  // namespace swarmt
