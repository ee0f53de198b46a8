#include "swarmt/data/corpus/token_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/data/corpus/token_file_source.h"
#include "test_util.h"
#include "bad_input.h"

namespace swarmt::data {
namespace {

using testing::error_of;

std::string write_corpus(const testing::TempDir& dir) {
  TokenFileWriter w(dir.file("corpus"), 100, Json{{"type", "test"}});
  w.add_document({1, 2, 3, 4, 5});
  w.add_document({10, 11, 12});
  w.add_document({20, 21, 22, 23, 24, 25, 26});
  w.commit();
  return dir.file("corpus.json");
}

TEST(TokenFile, written_documents_read_back_with_offsets) {
  testing::TempDir dir;
  auto f = TokenFile::open(write_corpus(dir));
  EXPECT_EQ(f.num_tokens(), 15);
  EXPECT_EQ(f.num_documents(), 3);
  EXPECT_EQ(f.document_offsets(), (std::vector<int64_t>{0, 5, 8, 15}));
  EXPECT_EQ(f.token(5), 10u);
  EXPECT_EQ(f.document_of(7), 1);
  EXPECT_EQ(f.document_of(8), 2);
  f.validate_tokens();
}

TEST(TokenFile, uncommitted_writer_leaves_nothing_behind) {
  testing::TempDir dir;
  {
    TokenFileWriter w(dir.file("partial"), 10, Json::object());
    w.add_document({1, 2});
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(TokenFile, truncated_token_file_is_rejected) {
  testing::TempDir dir;
  write_corpus(dir);
  std::filesystem::resize_file(dir.file("corpus.tokens"), 40);
  EXPECT_EQ(error_of([&] { TokenFile::open(dir.file("corpus.json")); }),
            dir.file("corpus.tokens") + ": file has 40 bytes but " + dir.file("corpus.json") +
                " declares 15 tokens (60 bytes); the file is truncated or does not belong to this sidecar");
}

TEST(TokenFile, inconsistent_sidecars_are_rejected_by_field) {
  testing::TempDir dir;
  write_corpus(dir);
  auto rewrite = [&](const std::function<void(Json&)>& edit) {
    Json j = read_json_file(dir.file("corpus.json"));
    edit(j);
    testing::write_file(dir.file("corpus.json"), j.dump());
  };
  rewrite([](Json& j) { j["document_offsets"] = {0, 8, 5, 15}; });
  EXPECT_EQ(error_of([&] { TokenFile::open(dir.file("corpus.json")); }),
            dir.file("corpus.json") + ": field 'document_offsets' must increase strictly (entry 2 is 5 after 8)");
  rewrite([](Json& j) { j["document_offsets"] = {0, 5, 14}; });
  EXPECT_EQ(error_of([&] { TokenFile::open(dir.file("corpus.json")); }),
            dir.file("corpus.json") + ": field 'document_offsets' must end with num_tokens (15), got 14");
  rewrite([](Json& j) { j["format"] = "other"; j["document_offsets"] = {0, 5, 8, 15}; });
  EXPECT_EQ(error_of([&] { TokenFile::open(dir.file("corpus.json")); }),
            dir.file("corpus.json") + ": field 'format' must be \"swarmt-tokens\" (is this a token file sidecar?)");
  rewrite([](Json& j) { j["format"] = "swarmt-tokens"; j["vocab_size"] = 12; });
  auto f = TokenFile::open(dir.file("corpus.json"));
  EXPECT_EQ(error_of([&] { f.validate_tokens(); }),
            dir.file("corpus.tokens") + ": the token at offset 7 (byte 28) is 12, outside the vocabulary of 12 ids "
                                        "(vocab_size in " + dir.file("corpus.json") + ")");  // ids are 0..11
}

// Windows never train across documents: doc_ids mark the boundary and the target that would cross it is
// ignored.
TEST(TokenFileSource, windows_mark_document_boundaries) {
  testing::TempDir dir;
  auto file = std::make_shared<TokenFile>(TokenFile::open(write_corpus(dir)));
  TokenFileSource source(file, 6, /*seed=*/3);
  int crossing = 0;
  for (int64_t i = 0; i < 50; ++i) {
    Sample s = source.sample(i);
    ASSERT_EQ(s.tokens.size(), 6u);
    EXPECT_EQ(s.doc_ids[0], 0);
    for (size_t t = 0; t + 1 < 6; ++t) {
      if (s.doc_ids[t + 1] != s.doc_ids[t]) {
        EXPECT_EQ(s.targets[t], kIgnoreIndex);
        ++crossing;
      } else {
        EXPECT_EQ(s.targets[t], s.tokens[t + 1]);
      }
    }
    Sample again = source.sample(i);
    EXPECT_EQ(again.tokens, s.tokens);  // pure function of the index
  }
  EXPECT_GT(crossing, 0);
}

}  // namespace
}  // namespace swarmt::data
