#include "swarmt/core/sha256.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"
#include "test_util.h"

namespace swarmt {
namespace {

// FIPS 180-4 examples and the NIST "one million a" vector.
TEST(Sha256, matches_published_test_vectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the padding boundaries (55, 56, 63, 64 bytes) fed in uneven pieces hash like one call.
TEST(Sha256, streaming_in_pieces_equals_one_call) {
  std::string message;
  for (int i = 0; i < 300; ++i) message.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  for (size_t length : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 300}) {
    const std::string part = message.substr(0, length);
    for (size_t piece : {1, 3, 17, 64, 100}) {
      Sha256 h;
      for (size_t at = 0; at < part.size(); at += piece) h.update(part.substr(at, piece));
      EXPECT_EQ(to_hex(h.finish()), sha256_hex(part)) << "length " << length << " piece " << piece;
    }
  }
}

TEST(Sha256, file_hash_equals_hash_of_its_bytes) {
  testing::TempDir tmp;
  std::string bytes(3 << 20, '\0');  // spans several 1 MiB read chunks
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 2654435761u >> 24);
  testing::write_file(tmp.file("data.bin"), bytes);
  uint64_t size = 0;
  EXPECT_EQ(sha256_file_hex(tmp.file("data.bin"), &size), sha256_hex(bytes));
  EXPECT_EQ(size, bytes.size());
}

TEST(Sha256, missing_file_is_reported_by_path) {
  testing::TempDir tmp;
  try {
    sha256_file_hex(tmp.file("absent.bin"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("absent.bin: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace swarmt
