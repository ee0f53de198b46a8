#include "swarmt/data/long_context/long_context_dataset.h"

#include <gtest/gtest.h>

#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/long_context/long_context_dataset_source.h"
#include "swarmt/data/long_context/long_context_dataset_synth.h"
#include "swarmt/data/source_factory.h"
#include "bad_input.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

using testing::error_of;

TEST(LengthBuckets, specs_parse_into_named_ranges) {
  auto b = parse_length_buckets("in:2048-8k,long:16k,ood:64K", "--buckets");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].name, "in");
  EXPECT_EQ(b[0].min_tokens, 2048);
  EXPECT_EQ(b[0].max_tokens, 8192);
  EXPECT_EQ(b[2].min_tokens, 65536);
  auto l = parse_length_list("1k,4096", "--lengths");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].name, "1k");
  EXPECT_EQ(l[0].max_tokens, 1024);
  auto d = default_length_buckets(512);
  EXPECT_EQ(d[0].min_tokens, 1024);
  EXPECT_EQ(d[0].max_tokens, 4096);
  EXPECT_EQ(d[1].min_tokens, 8192);
  EXPECT_EQ(d[1].max_tokens, 16384);
  EXPECT_EQ(d[2].min_tokens, 32768);
  EXPECT_EQ(d[2].max_tokens, 32768);
}

TEST(LengthBuckets, malformed_specs_name_the_option) {
  EXPECT_EQ(error_of([] { parse_length_buckets("in2048", "--buckets"); }),
            "--buckets: 'in2048' must be NAME:LENGTH or NAME:MIN-MAX (e.g. in:2048,long:8k-16k)");
  EXPECT_EQ(error_of([] { parse_length_buckets("in:8k-2k", "--buckets"); }), "--buckets: 'in:8k-2k' has MIN > MAX");
  EXPECT_EQ(error_of([] { parse_length_buckets("a:1k,a:2k", "--buckets"); }), "--buckets: bucket 'a' is named twice");
  EXPECT_EQ(error_of([] { parse_length_list("4x", "--lengths"); }), "--lengths: '4x' is not a token count (e.g. 4096, 4k)");
  EXPECT_EQ(error_of([] { parse_length_list("0", "--lengths"); }), "--lengths: '0' must be in [1, 4G] tokens");
  EXPECT_EQ(error_of([] { parse_length_list("", "--lengths"); }), "--lengths: '' is not a token count (e.g. 4096, 4k)");
}

TEST(SynthRequests, are_deterministic_within_bucket_ranges_and_stable_under_more_samples) {
  SynthOptions o;
  o.task = "long_qa";
  o.buckets = parse_length_buckets("in:1000-2000,ood:5000", "--buckets");
  o.samples_per_bucket = 20;
  o.seed = 3;
  auto a = synth_requests(o);
  ASSERT_EQ(a.size(), 40u);
  std::set<int64_t> targets;
  for (const auto& r : a) {
    if (r.bucket == "in") {
      EXPECT_GE(r.target_tokens, 1000);
      EXPECT_LE(r.target_tokens, 2000);
      targets.insert(r.target_tokens);
    } else {
      EXPECT_EQ(r.target_tokens, 5000);
    }
  }
  EXPECT_GT(targets.size(), 10u);
  EXPECT_EQ(a[21].id, "long_qa/ood/1");
  o.samples_per_bucket = 30;
  o.buckets.insert(o.buckets.begin(), LengthBucket{"extra", 100, 100});
  auto b = synth_requests(o);
  for (const auto& r : a) {
    auto same = std::find_if(b.begin(), b.end(), [&](const ExampleRequest& x) { return x.id == r.id; });
    ASSERT_NE(same, b.end());
    EXPECT_EQ(same->seed, r.seed);
    EXPECT_EQ(same->target_tokens, r.target_tokens);
  }
}

// A small dataset file with hand-written examples.
std::string write_examples(const testing::TempDir& dir, const std::vector<LongContextExample>& examples) {
  std::string text;
  for (const auto& e : examples) text += example_to_jsonl(e) + "\n";
  testing::write_file(dir.file("qa.jsonl"), text);
  return dir.file("qa.jsonl");
}

LongContextExample example(const std::string& id, const std::string& context, const std::string& answer) {
  return {id, "long_qa", "in", 0, context, "Question: What?\nAnswer:", answer, 50.0};
}

TEST(LongContextSource, targets_cover_only_the_answer_and_eos_and_padding_is_its_own_document) {
  testing::TempDir dir;
  const auto tok = load_text_tokenizer("byte");
  const std::string path = write_examples(dir, {example("a", "Some context.", "blue")});
  LongContextSource source(path, tok.tokenizer, tok.ids, 64, /*seed=*/0);
  Sample s = source.sample(0);
  const auto qa = tokenize_qa(tok.tokenizer, tok.ids, qa_prompt("Some context.", "Question: What?\nAnswer:"), "blue");
  ASSERT_EQ(s.tokens.size(), 64u);
  ASSERT_LT(qa.ids.size(), 64u);
  for (size_t t = 0; t < 64; ++t) {
    if (t < qa.ids.size()) {
      EXPECT_EQ(s.tokens[t], qa.ids[t]);
      EXPECT_EQ(s.doc_ids[t], 0);
      const bool predicts_answer = t + 1 >= qa.answer_begin && t + 1 < qa.ids.size();
      EXPECT_EQ(s.targets[t], predicts_answer ? qa.ids[t + 1] : kIgnoreIndex) << t;
    } else {
      EXPECT_EQ(s.tokens[t], tok.ids.pad);
      EXPECT_EQ(s.doc_ids[t], 1);
      EXPECT_EQ(s.targets[t], kIgnoreIndex);
    }
  }
  // " blue" and <eos>: 6 targets.
  int64_t targets = 0;
  for (auto t : s.targets) targets += t != kIgnoreIndex;
  EXPECT_EQ(targets, 6);
  EXPECT_EQ(tok.tokenizer.decode({static_cast<int32_t>(qa.ids[qa.answer_begin])}, false), " ");
}

TEST(LongContextSource, over_long_examples_lose_the_start_of_the_context_not_the_answer) {
  testing::TempDir dir;
  const auto tok = load_text_tokenizer("byte");
  const std::string context = "START " + std::string(500, 'x') + " END";
  const std::string path = write_examples(dir, {example("a", context, "42")});
  LongContextSource source(path, tok.tokenizer, tok.ids, 100, 0);
  Sample s = source.sample(0);
  std::vector<int32_t> ids(s.tokens.begin(), s.tokens.end());
  const std::string text = tok.tokenizer.decode(ids, /*skip_special_tokens=*/false);
  EXPECT_EQ(s.tokens[0], tok.ids.bos);
  EXPECT_EQ(text.find("START"), std::string::npos);
  EXPECT_NE(text.find("END\n\nQuestion: What?\nAnswer: 42"), std::string::npos) << text;
  // The last input predicts <eos>... or is <eos> itself when N + 1 tokens were kept.
  int64_t targets = 0;
  for (auto t : s.targets) targets += t != kIgnoreIndex;
  EXPECT_EQ(targets, 4);  // " ", "4", "2", <eos>
}

TEST(LongContextSource, each_pass_visits_every_example_once_in_a_seeded_order) {
  testing::TempDir dir;
  const auto tok = load_text_tokenizer("byte");
  std::vector<LongContextExample> examples;
  for (int i = 0; i < 10; ++i) examples.push_back(example("e" + std::to_string(i), "context " + std::to_string(i), "a"));
  const std::string path = write_examples(dir, examples);
  LongContextSource source(path, tok.tokenizer, tok.ids, 32, 5), again(path, tok.tokenizer, tok.ids, 32, 5),
      other(path, tok.tokenizer, tok.ids, 32, 6);
  std::set<int64_t> pass0, pass1;
  bool differs = false;
  for (int64_t i = 0; i < 10; ++i) {
    pass0.insert(source.example_index(i));
    pass1.insert(source.example_index(10 + i));
    EXPECT_EQ(source.example_index(i), again.example_index(i));
    differs = differs || source.example_index(i) != other.example_index(i);
  }
  EXPECT_EQ(pass0.size(), 10u);
  EXPECT_EQ(pass1.size(), 10u);
  EXPECT_TRUE(differs);
  EXPECT_EQ(source.example(3).context, "context 3");
}

TEST(LongContextSource, factory_builds_it_and_malformed_files_name_the_line) {
  testing::TempDir dir;
  const auto tok = load_text_tokenizer("byte");
  const std::string path = write_examples(dir, {example("a", "c", "x"), example("b", "c", "y")});
  Json config = {{"type", "jsonl_qa"}, {"path", path}, {"seed", 1}};
  auto source = make_data_source(JsonView(config, "train.json", "data."), tok, 16, 0);
  EXPECT_EQ(source->sequence_length(), 16);
  EXPECT_EQ(source->describe(), "jsonl_qa " + path + " (2 examples, loss on answers)");
  Json bad_loss = {{"type", "jsonl_qa"}, {"path", path}, {"loss", "some"}};
  EXPECT_EQ(error_of([&] { make_data_source(JsonView(bad_loss, "train.json", "data."), tok, 16, 0); }),
            "train.json: field 'data.loss' must be \"answer\" or \"all\" (got \"some\")");
  testing::write_file(dir.file("bad.jsonl"), example_to_jsonl(example("a", "c", "x")) + "\n\n{\"id\": 1}\n");
  EXPECT_EQ(error_of([&] { LongContextSource(dir.file("bad.jsonl"), tok.tokenizer, tok.ids, 16, 0); }),
            dir.file("bad.jsonl") + ":3: field 'id' must be a string (got 1)");
  testing::write_file(dir.file("empty.jsonl"), "\n");
  EXPECT_EQ(error_of([&] { LongContextSource(dir.file("empty.jsonl"), tok.tokenizer, tok.ids, 16, 0); }),
            dir.file("empty.jsonl") + ": the file has no examples");
}

TEST(QaEvaluation, items_pair_prompts_with_answers_and_scoring_normalises) {
  testing::TempDir dir;
  const std::string path = write_examples(dir, {example("a", "The sky.", "Blue sky")});
  auto items = read_qa_eval_items(path);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].prompt, "The sky.\n\nQuestion: What?\nAnswer:");
  EXPECT_EQ(items[0].answers, std::vector<std::string>{"Blue sky"});
  EXPECT_TRUE(qa_exact_match(" blue sky.\nQuestion: next", "Blue sky"));
  EXPECT_FALSE(qa_exact_match("blue sky today", "Blue sky"));
  EXPECT_TRUE(qa_contains_answer("It is blue sky today", "Blue sky"));
  EXPECT_FALSE(qa_contains_answer("grey\nblue sky", "Blue sky"));
}

TEST(SynthDataset, written_file_reads_back_and_is_identical_for_the_same_seed) {
  testing::TempDir dir;
  const auto tok = load_text_tokenizer("byte");
  const auto counter = make_qa_length_counter(tok.tokenizer, tok.ids);
  for (const std::string& task_name : long_context_task_names()) {
    SCOPED_TRACE(task_name);
    SynthOptions o;
    o.task = task_name;
    o.buckets = parse_length_buckets("in:1500-2500,long:4k", "--buckets");
    o.samples_per_bucket = 3;
    o.synthetic_projects = 8;
    auto task = make_long_context_task(o, counter);
    auto summary = write_long_context_dataset(o, *task, dir.file("a.jsonl"));
    write_long_context_dataset(o, *task, dir.file("b.jsonl"));
    EXPECT_EQ(summary.examples, 6);
    EXPECT_EQ(read_text_file(dir.file("a.jsonl")), read_text_file(dir.file("b.jsonl")));
    auto examples = read_long_context_examples(dir.file("a.jsonl"));
    ASSERT_EQ(examples.size(), 6u);
    for (const auto& e : examples) {
      EXPECT_EQ(e.task, task_name);
      EXPECT_LE(e.length_tokens, e.bucket == "in" ? 2500 : 4096);
      EXPECT_GE(e.length_tokens, e.bucket == "in" ? 1400 : 3996);
    }
  }
}

}  // namespace
}  // namespace swarmt::data
