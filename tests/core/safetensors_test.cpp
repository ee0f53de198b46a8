// The safetensors format itself (torch-free API): the reference byte layout both ways, round trips of
// every dtype, and one specific error message per kind of malformed file.
#include "swarmt/core/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "swarmt/core/error.h"
#include "test_util.h"
#include "core/file_helpers.h"

namespace swarmt {
namespace {

using testing::le64;
using testing::reference_layout;
using testing::slurp;

SafetensorsHeader parse(const std::string& bytes, const std::string& source = "test.safetensors") {
  return parse_safetensors_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), source);
}

float read_f32(const uint8_t* p) {
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

TEST(Safetensors, reads_bytes_laid_out_by_the_reference_writer) {
  // {"a": float32 [1.5, -2], "b": int16 [[7, -1]]} with metadata, exactly as safetensors.torch.save_file
  // writes it (F32 before I16: descending alignment).
  std::string data;
  const float a[2] = {1.5f, -2.0f};
  const int16_t b[2] = {7, -1};
  data.append(reinterpret_cast<const char*>(a), sizeof(a));
  data.append(reinterpret_cast<const char*>(b), sizeof(b));
  const std::string json =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"I16","shape":[1,2],"data_offsets":[8,12]}})";
  const std::string bytes = reference_layout(json, data);
  ASSERT_EQ((bytes.size() - data.size()) % 8, 0u);

  testing::TempDir tmp;
  testing::write_file(tmp.file("ref.safetensors"), bytes);
  SafetensorsFile file = SafetensorsFile::open(tmp.file("ref.safetensors"));
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  const TensorEntry& ea = file.entry("a");
  EXPECT_EQ(ea.dtype, DType::F32);
  EXPECT_EQ(ea.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(read_f32(file.data(ea)), 1.5f);
  EXPECT_EQ(read_f32(file.data(ea) + 4), -2.0f);
  const TensorEntry& eb = file.entry("b");
  EXPECT_EQ(eb.dtype, DType::I16);
  EXPECT_EQ(eb.shape, (std::vector<int64_t>{1, 2}));
  int16_t b_read[2];
  std::memcpy(b_read, file.data(eb), 4);
  EXPECT_EQ(b_read[0], 7);
  EXPECT_EQ(b_read[1], -1);
  EXPECT_TRUE(file.is_aligned(ea));
  EXPECT_TRUE(file.is_aligned(eb));
}

TEST(Safetensors, writer_output_is_byte_identical_to_the_reference_layout) {
  const float a[2] = {1.5f, -2.0f};
  const int16_t b[2] = {7, -1};
  const double c = 3.25;
  testing::TempDir tmp;
  // Given in an order the writer must change: I16 "b", F64 "c", F32 "a" -> c (8 bytes), a (4), b (2).
  write_safetensors(tmp.file("out.safetensors"),
                    {{"b", DType::I16, {1, 2}, b, 4}, {"c", DType::F64, {}, &c, 8}, {"a", DType::F32, {2}, a, 8}},
                    {{"format", "pt"}});
  std::string data;
  data.append(reinterpret_cast<const char*>(&c), 8);
  data.append(reinterpret_cast<const char*>(a), 8);
  data.append(reinterpret_cast<const char*>(b), 4);
  const std::string expected = reference_layout(
      R"({"__metadata__":{"format":"pt"},"c":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"b":{"dtype":"I16","shape":[1,2],"data_offsets":[16,20]}})",
      data);
  EXPECT_EQ(slurp(tmp.file("out.safetensors")), expected);
}

TEST(Safetensors, no_metadata_key_when_metadata_is_empty) {
  const uint8_t x = 9;
  testing::TempDir tmp;
  write_safetensors(tmp.file("x.safetensors"), {{"x", DType::U8, {1}, &x, 1}});
  const std::string bytes = slurp(tmp.file("x.safetensors"));
  EXPECT_EQ(bytes.find("__metadata__"), std::string::npos);
  EXPECT_EQ(bytes, reference_layout(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "\x09"));
}

TEST(Safetensors, round_trip_of_every_dtype_preserves_bytes_shape_and_dtype) {
  std::mt19937 rng(7);
  std::vector<std::string> buffers;
  std::vector<TensorToWrite> tensors;
  for (DType dtype : all_dtypes()) {
    const std::vector<int64_t> shape = {3, 5};
    std::string bytes(15 * dtype_size(dtype), '\0');
    for (char& ch : bytes) ch = static_cast<char>(rng());
    if (dtype == DType::BOOL)
      for (char& ch : bytes) ch = static_cast<char>(ch & 1);
    buffers.push_back(bytes);
    tensors.push_back({std::string("t_") + dtype_name(dtype), dtype, shape, nullptr, bytes.size()});
  }
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].data = buffers[i].data();
  // A scalar and an empty tensor as well.
  const float scalar = 42.0f;
  tensors.push_back({"scalar", DType::F32, {}, &scalar, 4});
  tensors.push_back({"empty", DType::BF16, {0, 7}, nullptr, 0});

  testing::TempDir tmp;
  write_safetensors(tmp.file("all.safetensors"), tensors, {{"k", "v"}});
  SafetensorsFile file = SafetensorsFile::open(tmp.file("all.safetensors"));
  ASSERT_EQ(file.tensors().size(), tensors.size());
  for (const TensorToWrite& t : tensors) {
    SCOPED_TRACE(t.name);
    const TensorEntry& e = file.entry(t.name);
    EXPECT_EQ(e.dtype, t.dtype);
    EXPECT_EQ(e.shape, t.shape);
    ASSERT_EQ(e.nbytes(), t.nbytes);
    if (t.nbytes) {
      EXPECT_EQ(std::memcmp(file.data(e), t.data, t.nbytes), 0);
    }
    EXPECT_TRUE(file.is_aligned(e));  // descending-alignment order keeps every tensor aligned
  }
  EXPECT_EQ(file.metadata().at("k"), "v");
  EXPECT_EQ(file.entry("scalar").numel(), 1);
  EXPECT_EQ(file.entry("empty").numel(), 0);
}

TEST(Safetensors, dtype_names_and_sizes_follow_the_reference) {
  const std::vector<std::pair<std::string, size_t>> expected = {
      {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},  {"I64", 8},     {"U64", 8},     {"F64", 8}};
  for (const auto& [name, size] : expected) {
    DType d;
    ASSERT_TRUE(parse_dtype(name, &d)) << name;
    EXPECT_EQ(dtype_name(d), name);
    EXPECT_EQ(dtype_size(d), size) << name;
  }
  DType d;
  EXPECT_FALSE(parse_dtype("f32", &d));
  EXPECT_FALSE(parse_dtype("F4", &d));
}

TEST(Safetensors, header_whitespace_and_any_tensor_order_are_tolerated) {
  // Leading newline/tab (writers may pad to a page boundary), tensors listed against data order.
  const std::string json =
      "\n\t {\"late\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]},"
      "\"early\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}  \n ";
  const std::string bytes = le64(json.size()) + json + "abcd";
  SafetensorsHeader h = parse(bytes);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "early");  // data order
  EXPECT_EQ(h.tensors[1].name, "late");
  EXPECT_EQ(h.find("late")->begin, 2u);
  EXPECT_EQ(h.data_start, 8 + json.size());
}

TEST(Safetensors, misaligned_data_is_reported_as_such) {
  // An old-style file: a 1-byte tensor first puts the F32 at data offset 1.
  std::string data = "\x01";
  const float v[2] = {1.0f, 2.0f};
  data.append(reinterpret_cast<const char*>(v), 8);
  testing::TempDir tmp;
  testing::write_file(tmp.file("old.safetensors"),
                      reference_layout(R"({"flag":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                       R"("w":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})",
                                       data));
  SafetensorsFile file = SafetensorsFile::open(tmp.file("old.safetensors"));
  EXPECT_FALSE(file.is_aligned(file.entry("w")));
  EXPECT_EQ(read_f32(file.data(file.entry("w")) + 4), 2.0f);
}

TEST(Safetensors, empty_header_and_zero_sized_tensors_are_valid) {
  EXPECT_TRUE(parse(reference_layout("{}", "")).tensors.empty());
  SafetensorsHeader h = parse(reference_layout(
      R"({"z":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"o":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x"));
  EXPECT_EQ(h.tensors.size(), 2u);
}

TEST(Safetensors, missing_tensor_is_reported_with_file_and_name) {
  testing::TempDir tmp;
  const uint8_t x = 1;
  write_safetensors(tmp.file("m.safetensors"), {{"x", DType::U8, {1}, &x, 1}});
  SafetensorsFile file = SafetensorsFile::open(tmp.file("m.safetensors"));
  try {
    file.entry("y");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.safetensors: no tensor named 'y'"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, truncated_file_is_rejected) {
  testing::TempDir tmp;
  const float w[4] = {1, 2, 3, 4};
  write_safetensors(tmp.file("w.safetensors"), {{"w", DType::F32, {4}, w, 16}});
  std::string bytes = slurp(tmp.file("w.safetensors"));
  testing::write_file(tmp.file("cut.safetensors"), bytes.substr(0, bytes.size() - 1));
  try {
    SafetensorsFile::open(tmp.file("cut.safetensors"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("cut.safetensors: tensor 'w': data_offsets [0, 16] run past the end of the data section (15 bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(Safetensors, opening_a_directory_or_missing_file_is_an_input_error) {
  testing::TempDir tmp;
  EXPECT_THROW(SafetensorsFile::open(tmp.path()), Error);
  EXPECT_THROW(SafetensorsFile::open(tmp.file("absent.safetensors")), Error);
}

TEST(Safetensors, writer_rejects_inconsistent_tensors_with_their_names) {
  testing::TempDir tmp;
  const float w[2] = {1, 2};
  auto message_of = [&](const std::vector<TensorToWrite>& tensors) -> std::string {
    try {
      write_safetensors(tmp.file("bad.safetensors"), tensors);
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_NE(message_of({{"w", DType::F32, {3}, w, 8}}).find("tensor 'w': shape [3] of F32 needs 12 bytes but 8 were given"),
            std::string::npos);
  EXPECT_NE(message_of({{"w", DType::F32, {2}, w, 8}, {"w", DType::F32, {2}, w, 8}}).find("tensor 'w': appears twice"),
            std::string::npos);
  EXPECT_NE(message_of({{"__metadata__", DType::F32, {2}, w, 8}}).find("reserved"), std::string::npos);
  EXPECT_NE(message_of({{"w", DType::F32, {-2}, w, 8}}).find("invalid dimension -2"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tmp.file("bad.safetensors")));
}

// Random damage to a valid file is either accepted (if it happens to stay valid) or rejected with
// swarmt::Error: never another exception, never a crash (the fuzzers explore this further).
TEST(Safetensors, random_corruption_never_escapes_as_anything_but_an_input_error) {
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const int64_t ids[2] = {3, 4};
  testing::TempDir tmp;
  write_safetensors(tmp.file("ok.safetensors"), {{"w", DType::F32, {2, 3}, w, 24}, {"ids", DType::I64, {2}, ids, 16}},
                    {{"format", "pt"}});
  const std::string good = slurp(tmp.file("ok.safetensors"));
  std::mt19937 rng(123);
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = good;
    if (trial % 3 == 0) {
      bytes.resize(rng() % bytes.size());
    } else {
      const int flips = 1 + rng() % 3;
      for (int f = 0; f < flips; ++f) bytes[rng() % std::min<size_t>(bytes.size(), 140)] = static_cast<char>(rng());
    }
    try {
      parse(bytes);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
}

// ----------------------------------------------------------------------------- malformed headers

struct MalformedCase {
  std::string name;      // the test name
  std::string bytes;     // the whole file
  std::string expected;  // a substring of the message (after "bad.safetensors: ")
};

// Test listings show the case name, not the bytes.
void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

std::string entry_json(const std::string& name, const std::string& body) { return "\"" + name + "\":{" + body + "}"; }

std::vector<MalformedCase> malformed_cases() {
  const std::string f32x2 = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  const std::string eight(8, 'x');
  return {
      {"file_shorter_than_8_bytes", std::string("\x05\x00\x00", 3), "file is too short to be safetensors (3 bytes"},
      {"header_over_the_size_cap", le64(100000001) + "{}", "header length 100000001 exceeds the limit of 100000000 bytes"},
      {"header_length_beyond_the_file", le64(1000) + "{}", "header length 1000 runs past the end of the file (10 bytes"},
      {"header_not_json", reference_layout("{\"a\": nope}", ""), "header is not valid JSON"},
      {"header_not_utf8", reference_layout("{\"\xff\xfe\":{}}", ""), "header is not valid JSON"},
      {"header_with_trailing_garbage", reference_layout("{} {}", ""), "header is not valid JSON"},
      {"header_not_an_object", reference_layout("[1, 2]", ""), "header must be a JSON object (got [1,2])"},
      {"entry_not_an_object", reference_layout(R"({"a":[0,8]})", eight),
       "tensor 'a': entry must be a JSON object with dtype, shape and data_offsets"},
      {"entry_missing_a_field", reference_layout(R"({"a":{"dtype":"F32","shape":[2]}})", eight),
       "tensor 'a': missing field 'data_offsets'"},
      {"entry_with_an_extra_field", reference_layout("{" + entry_json("a", f32x2 + R"(,"strides":[1])") + "}", eight),
       "tensor 'a': unexpected field 'strides'"},
      {"unknown_dtype", reference_layout(R"({"a":{"dtype":"F128","shape":[2],"data_offsets":[0,8]}})", eight),
       "tensor 'a': unknown dtype \"F128\""},
      {"dtype_not_a_string", reference_layout(R"({"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", eight),
       "tensor 'a': dtype must be a string"},
      {"unsupported_sub_byte_dtype", reference_layout(R"({"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", "x"),
       "tensor 'a': dtype F4 is not supported"},
      {"shape_not_a_list", reference_layout(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", eight),
       "tensor 'a': shape must be a list of non-negative integers (got 2)"},
      {"shape_with_a_fraction", reference_layout(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", eight),
       "tensor 'a': shape must be a list of non-negative integers (got [2.5])"},
      {"negative_dimension", reference_layout(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight),
       "tensor 'a': shape [-2] has a negative dimension"},
      {"dimension_beyond_2_pow_48",
       reference_layout(R"({"a":{"dtype":"U8","shape":[281474976710657],"data_offsets":[0,8]}})", eight),
       "tensor 'a': dimension 281474976710657 in shape [281474976710657] exceeds the 2^48 limit"},
      {"byte_size_overflowing_64_bits",
       reference_layout(R"({"a":{"dtype":"F64","shape":[281474976710656,281474976710656],"data_offsets":[0,8]}})", eight),
       "tensor 'a': shape [281474976710656,281474976710656] of F64 is too large (its byte size overflows 64 bits)"},
      {"data_offsets_not_two_integers", reference_layout(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}})", eight),
       "tensor 'a': data_offsets must be two non-negative integers [begin, end] (got [8])"},
      {"data_offsets_negative", reference_layout(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", eight),
       "tensor 'a': data_offsets must be two non-negative integers"},
      {"data_offsets_out_of_order", reference_layout(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", eight),
       "tensor 'a': data_offsets [8, 0] are not ordered (begin > end)"},
      {"shape_and_byte_length_disagree", reference_layout(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight),
       "tensor 'a': shape [3] of F32 needs 12 bytes but data_offsets [0, 8] span 8"},
      {"offsets_past_the_end", reference_layout(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight),
       "tensor 'a': data_offsets [0, 16] run past the end of the data section (8 bytes; truncated file?)"},
      {"overlapping_offsets",
       reference_layout(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                        std::string(12, 'x')),
       "tensors 'a' [0, 8] and 'b' [4, 12] overlap"},
      {"gap_between_tensors",
       reference_layout(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                        std::string(12, 'x')),
       "gap of 4 bytes before tensor 'b' (data_offsets [8, 12], previous tensor 'a' ends at 4)"},
      {"gap_at_the_start", reference_layout(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight),
       "gap of 4 bytes before tensor 'a' (data_offsets [4, 8])"},
      {"trailing_bytes_not_covered", reference_layout(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight),
       "4 bytes after the last tensor are not covered by any tensor (data section is 8 bytes, tensors end at 4)"},
      {"duplicate_tensor_name", reference_layout("{" + entry_json("a", f32x2) + "," + entry_json("a", f32x2) + "}", eight),
       "tensor 'a' appears twice in the header (duplicate tensor name)"},
      {"duplicate_field_in_an_entry",
       reference_layout(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", eight),
       "tensor 'a': field 'dtype' appears twice"},
      {"metadata_not_an_object", reference_layout(R"({"__metadata__":["pt"]})", ""),
       "__metadata__ must be an object of strings (got [\"pt\"])"},
      {"metadata_value_not_a_string", reference_layout(R"({"__metadata__":{"format":"pt","epoch":3}})", ""),
       "__metadata__ field 'epoch' must be a string (got 3)"},
      {"absurdly_nested_header", reference_layout(std::string(40, '[') + std::string(40, ']'), ""),
       "header JSON is nested too deeply"},
  };
}

class SafetensorsMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(SafetensorsMalformed, is_rejected_with_its_own_message_naming_the_file) {
  const MalformedCase& c = GetParam();
  try {
    parse(c.bytes, "bad.safetensors");
    FAIL() << "accepted a malformed file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.safetensors: ", 0), 0u) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << "message: " << message << "\nexpected: " << c.expected;
  }
}

INSTANTIATE_TEST_SUITE_P(Safetensors, SafetensorsMalformed, ::testing::ValuesIn(malformed_cases()),
                         [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

// Each kind of damage is told apart: no two malformed files get the same message.
TEST(Safetensors, malformed_files_get_distinct_messages) {
  std::set<std::string> messages;
  for (const MalformedCase& c : malformed_cases()) {
    try {
      parse(c.bytes, "bad.safetensors");
    } catch (const Error& e) {
      messages.insert(e.what());
    }
  }
  EXPECT_EQ(messages.size(), malformed_cases().size());
}

}  // namespace
}  // namespace swarmt
