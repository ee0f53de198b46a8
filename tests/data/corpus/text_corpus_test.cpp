#include "swarmt/data/corpus/text_corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/corpus/text_corpus_prepare.h"
#include "swarmt/data/corpus/token_file.h"
#include "bad_input.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

using testing::error_of;

std::vector<Document> all_documents(DocumentStream& stream) {
  std::vector<Document> docs;
  Document d;
  while (stream.next(d)) docs.push_back(d);
  return docs;
}

// Decodes document i of a token file, without its special tokens.
std::string decode_document(const TokenFile& file, const TextTokenizer& tok, int64_t i) {
  std::vector<int32_t> ids;
  for (int64_t t = file.document_offsets()[i]; t < file.document_offsets()[i + 1]; ++t)
    ids.push_back(static_cast<int32_t>(file.token(t)));
  return tok.tokenizer.decode(ids, /*skip_special_tokens=*/true);
}

TEST(TextCorpus, utf8_validation_finds_the_first_bad_byte) {
  EXPECT_EQ(invalid_utf8_offset("plain ascii"), std::string::npos);
  EXPECT_EQ(invalid_utf8_offset("caf\xC3\xA9 \xF0\x9F\x98\x80"), std::string::npos);  // é, emoji
  EXPECT_EQ(invalid_utf8_offset("ab\xFF"), 2u);
  EXPECT_EQ(invalid_utf8_offset("a\xC3"), 1u);              // truncated sequence
  EXPECT_EQ(invalid_utf8_offset("\xC0\xAF"), 0u);           // overlong '/'
  EXPECT_EQ(invalid_utf8_offset("x\xED\xA0\x80"), 1u);      // surrogate U+D800
  EXPECT_EQ(invalid_utf8_offset("\xF4\x90\x80\x80"), 0u);   // > U+10FFFF
  EXPECT_EQ(invalid_utf8_offset("\x80"), 0u);               // lone continuation byte
}

TEST(TextCorpus, paragraph_mode_splits_on_blank_lines_and_names_the_first_line) {
  testing::TempDir dir;
  testing::write_file(dir.file("a.txt"), "\nFirst line\nsecond line\n\n  \r\nOther block\r\n\n\n");
  auto stream = open_text_documents(dir.file("a.txt"), /*split_paragraphs=*/true);
  auto docs = all_documents(*stream);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].text, "First line\nsecond line");
  EXPECT_EQ(docs[0].where, dir.file("a.txt") + ":2");
  EXPECT_EQ(docs[1].text, "Other block");
  EXPECT_EQ(docs[1].where, dir.file("a.txt") + ":6");
}

TEST(TextCorpus, invalid_utf8_in_a_text_file_names_file_line_and_column) {
  testing::TempDir dir;
  testing::write_file(dir.file("a.txt"), "good line\nbad \xFE here\n");
  auto whole = open_text_documents(dir.file("a.txt"), false);
  EXPECT_EQ(error_of([&] { all_documents(*whole); }),
            dir.file("a.txt") + ":2: invalid UTF-8 (byte 0xfe at column 5); text files must be UTF-8");
  auto paragraphs = open_text_documents(dir.file("a.txt"), true);
  EXPECT_EQ(error_of([&] { all_documents(*paragraphs); }),
            dir.file("a.txt") + ":2: invalid UTF-8 (byte 0xfe at column 5); text files must be UTF-8");
}

TEST(TextCorpus, prose_passages_are_paragraphs_of_sentences) {
  ProseCorpus corpus;
  append_passages("One two.  Three four!\nFive six.\n\n\nSeven eight.", corpus);
  ASSERT_EQ(corpus.passages.size(), 2u);
  EXPECT_EQ(corpus.passages[0], (std::vector<std::string>{"One two.", "Three four!", "Five six."}));
  EXPECT_EQ(corpus.passages[1], (std::vector<std::string>{"Seven eight."}));
  EXPECT_EQ(corpus.num_words, 8);
  EXPECT_GT(builtin_prose_corpus().passages.size(), 1000u);
}

// ---------------------------------------------------------------------------------------------------
// data prepare

TEST(DataPrepare, documents_round_trip_through_the_token_file) {
  testing::TempDir dir;
  const std::vector<std::string> texts = {"The first document.\nWith two lines.", "Zweites Dokument: äöü ß — ✓",
                                          "third", "{\"json\": \"lookalike\"}"};
  std::string jsonl;
  for (const auto& t : texts) jsonl += Json{{"text", t}, {"meta", 1}}.dump() + "\n";
  testing::write_file(dir.file("docs.jsonl"), jsonl);
  const auto tok = load_text_tokenizer("byte");
  PrepareOptions o;
  o.inputs = {dir.file("docs.jsonl")};
  o.out_prefix = dir.file("out");
  o.validation_fraction = 0;
  o.add_eos = true;
  o.tokenizer_spec = "byte";
  auto summary = prepare_token_files(o, tok);
  EXPECT_EQ(summary.documents, 4);
  EXPECT_FALSE(summary.wrote_validation);
  EXPECT_FALSE(std::filesystem::exists(dir.file("out-validation.json")));
  auto file = TokenFile::open(dir.file("out.json"));
  ASSERT_EQ(file.num_documents(), 4);
  EXPECT_EQ(file.num_tokens(), summary.tokens);
  EXPECT_EQ(file.tokenizer_info().at("spec"), "byte");
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(decode_document(file, tok, i), texts[static_cast<size_t>(i)]);
    // <bos> first (the byte tokenizer config adds it), <eos> last (--add-eos).
    EXPECT_EQ(file.token(file.document_offsets()[i]), static_cast<uint32_t>(tok.ids.bos));
    EXPECT_EQ(file.token(file.document_offsets()[i + 1] - 1), static_cast<uint32_t>(tok.ids.eos));
  }
}

TEST(DataPrepare, text_files_are_whole_documents_or_paragraphs) {
  testing::TempDir dir;
  testing::write_file(dir.file("a.txt"), "Para one.\n\nPara two.\n");
  testing::write_file(dir.file("b.txt"), "   \n");  // blank: skipped
  const auto tok = load_text_tokenizer("byte");
  PrepareOptions o;
  o.inputs = {dir.file("a.txt"), dir.file("b.txt")};
  o.out_prefix = dir.file("whole");
  o.validation_fraction = 0;
  auto whole = prepare_token_files(o, tok);
  EXPECT_EQ(whole.documents, 1);
  EXPECT_EQ(whole.skipped_documents, 1);
  EXPECT_EQ(decode_document(TokenFile::open(dir.file("whole.json")), tok, 0), "Para one.\n\nPara two.\n");
  o.out_prefix = dir.file("paragraphs");
  o.split_paragraphs = true;
  auto paragraphs = prepare_token_files(o, tok);
  EXPECT_EQ(paragraphs.documents, 2);
  auto file = TokenFile::open(dir.file("paragraphs.json"));
  EXPECT_EQ(decode_document(file, tok, 1), "Para two.");
}

TEST(DataPrepare, validation_split_is_deterministic_disjoint_and_order_independent) {
  testing::TempDir dir;
  std::string jsonl, reversed;
  std::vector<std::string> lines;
  for (int i = 0; i < 400; ++i) lines.push_back(Json{{"text", "document number " + std::to_string(i)}}.dump() + "\n");
  for (const auto& l : lines) jsonl += l;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) reversed += *it;
  testing::write_file(dir.file("a.jsonl"), jsonl);
  testing::write_file(dir.file("b.jsonl"), reversed);
  const auto tok = load_text_tokenizer("byte");
  auto split_of = [&](const std::string& input, const std::string& prefix) {
    PrepareOptions o;
    o.inputs = {input};
    o.out_prefix = dir.file(prefix);
    o.validation_fraction = 0.1;
    prepare_token_files(o, tok);
    std::set<std::string> train, validation;
    auto t = TokenFile::open(dir.file(prefix + ".json"));
    for (int64_t i = 0; i < t.num_documents(); ++i) train.insert(decode_document(t, tok, i));
    auto v = TokenFile::open(dir.file(prefix + "-validation.json"));
    for (int64_t i = 0; i < v.num_documents(); ++i) validation.insert(decode_document(v, tok, i));
    return std::make_pair(train, validation);
  };
  auto [train1, val1] = split_of(dir.file("a.jsonl"), "run1");
  auto [train2, val2] = split_of(dir.file("a.jsonl"), "run2");
  auto [train3, val3] = split_of(dir.file("b.jsonl"), "run3");
  EXPECT_EQ(val1, val2);
  EXPECT_EQ(val1, val3);  // the split follows the text, not the position in the input
  EXPECT_EQ(train1.size() + val1.size(), 400u);
  for (const auto& v : val1) EXPECT_EQ(train1.count(v), 0u) << v;
  EXPECT_GT(val1.size(), 15u);  // ~40 expected
  EXPECT_LT(val1.size(), 70u);
}

TEST(DataPrepare, malformed_jsonl_names_the_file_and_line_and_writes_nothing) {
  testing::TempDir dir;
  testing::write_file(dir.file("docs.jsonl"), "{\"text\": \"ok\"}\n{\"text\": [\"not\", \"a string\"]}\n");
  const auto tok = load_text_tokenizer("byte");
  PrepareOptions o;
  o.inputs = {dir.file("docs.jsonl")};
  o.out_prefix = dir.file("out");
  EXPECT_EQ(error_of([&] { prepare_token_files(o, tok); }),
            dir.file("docs.jsonl") + ":2: field 'text' must be a string (got [\"not\",\"a string\"])");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.tokens")));
}

TEST(DataPrepare, bad_options_and_missing_inputs_are_clear_errors) {
  testing::TempDir dir;
  testing::write_file(dir.file("a.txt"), "text");
  const auto tok = load_text_tokenizer("byte");
  PrepareOptions o;
  o.inputs = {dir.file("a.txt"), dir.file("missing.txt")};
  o.out_prefix = dir.file("out");
  EXPECT_EQ(error_of([&] { prepare_token_files(o, tok); }), dir.file("missing.txt") + ": no such file");
  o.inputs = {dir.file("a.txt")};
  o.validation_fraction = 1.0;
  EXPECT_EQ(error_of([&] { prepare_token_files(o, tok); }),
            "data prepare: --validation-fraction must be in [0, 1) (got 1)");
  o.validation_fraction = 0;
  o.format = "csv";
  EXPECT_EQ(error_of([&] { prepare_token_files(o, tok); }), "--format must be txt, jsonl or auto (got 'csv')");
  o.format = "auto";
  o.out_prefix = dir.file("no-such-dir/out");
  EXPECT_EQ(error_of([&] { prepare_token_files(o, tok); }),
            "--out " + dir.file("no-such-dir/out") + ": directory " + dir.file("no-such-dir") + " does not exist");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()) || !std::filesystem::exists(dir.file("out.json")));
}

}  // namespace
}  // namespace swarmt::data
