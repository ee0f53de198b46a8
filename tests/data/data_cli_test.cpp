// `swarmt data prepare` and `swarmt data synth` through the real binary.
#include <gtest/gtest.h>

#include <filesystem>

#include "swarmt/core/json.h"
#include "swarmt/data/corpus/token_file.h"
#include "swarmt/data/long_context/long_context_dataset_source.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

TEST(DataCli, prepare_writes_train_and_validation_token_files_and_a_summary) {
  testing::TempDir dir;
  std::string jsonl;
  for (int i = 0; i < 200; ++i) jsonl += Json{{"text", "Document " + std::to_string(i) + " says hello."}}.dump() + "\n";
  testing::write_file(dir.file("docs.jsonl"), jsonl);
  auto r = testing::run_swarmt("-q data prepare --tokenizer byte --input " + dir.file("docs.jsonl") + " --out " +
                               dir.file("corpus") + " --validation-fraction 0.1 --add-eos");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("documents: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokens/s"), std::string::npos) << r.out;
  auto train = TokenFile::open(dir.file("corpus.json"));
  auto validation = TokenFile::open(dir.file("corpus-validation.json"));
  EXPECT_EQ(train.num_documents() + validation.num_documents(), 200);
  EXPECT_GT(validation.num_documents(), 5);
}

TEST(DataCli, malformed_input_exits_2_naming_file_and_line) {
  testing::TempDir dir;
  testing::write_file(dir.file("docs.jsonl"), "{\"text\": \"a\"}\n{\"text\": \"b\"\n");
  auto r = testing::run_swarmt("-q data prepare --input " + dir.file("docs.jsonl") + " --out " + dir.file("corpus"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: " + dir.file("docs.jsonl") + ":2: not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("corpus.json")));
}

TEST(DataCli, synth_writes_every_bucket_and_repeats_itself_for_a_seed) {
  testing::TempDir dir;
  for (const std::string task : {"long_qa", "facts_in_noise", "type_prediction"}) {
    SCOPED_TRACE(task);
    const std::string args = "-q data synth " + task + " --tokenizer byte --samples 2 --buckets in:2k-3k,long:6k --seed 4 --out ";
    auto a = testing::run_swarmt(args + dir.file(task + "_a.jsonl"));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_NE(a.out.find("wrote 4 examples"), std::string::npos) << a.out;
    auto b = testing::run_swarmt(args + dir.file(task + "_b.jsonl"));
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(read_text_file(dir.file(task + "_a.jsonl")), read_text_file(dir.file(task + "_b.jsonl")));
    auto examples = read_long_context_examples(dir.file(task + "_a.jsonl"));
    ASSERT_EQ(examples.size(), 4u);
    EXPECT_EQ(examples[0].bucket, "in");
    EXPECT_EQ(examples[3].bucket, "long");
  }
}

TEST(DataCli, synth_rejects_unknown_tasks_and_conflicting_length_options) {
  testing::TempDir dir;
  auto r = testing::run_swarmt("-q data synth poetry --out " + dir.file("x.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'poetry' is not a synthetic long-context task"), std::string::npos) << r.err;
  r = testing::run_swarmt("-q data synth long_qa --lengths 1k --buckets in:2k --out " + dir.file("x.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.jsonl")));
}

TEST(DataCli, synth_rejects_unknown_templates_and_rewrites_of_facts_that_cannot_change) {
  testing::TempDir dir;
  auto r = testing::run_swarmt("-q data synth long_qa --lengths 1k --templates code,poem --out " + dir.file("x.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--templates"), std::string::npos) << r.err;
  r = testing::run_swarmt("-q data synth long_qa --lengths 1k --templates founded --rewrites 2 --out " + dir.file("x.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'founded' cannot be rewritten"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.jsonl")));
}

}  // namespace
}  // namespace swarmt::data
