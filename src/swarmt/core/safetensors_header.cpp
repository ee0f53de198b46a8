// Parsing and validation of safetensors headers (the part of the format a malicious or damaged file
// controls). Mirrors the checks of the reference reader (safetensors/src/tensor.rs, Metadata::validate)
// and adds the ones it leaves to serde: duplicate keys, exact field sets, the 48-bit dimension limit.
#include <algorithm>
#include <cstring>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/safetensors.h"

namespace swarmt {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::BOOL, "BOOL", 1},       {DType::U8, "U8", 1},   {DType::I8, "I8", 1},
    {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::I16, "I16", 2},         {DType::U16, "U16", 2}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},       {DType::I32, "I32", 4}, {DType::U32, "U32", 4},
    {DType::F32, "F32", 4},         {DType::I64, "I64", 8}, {DType::U64, "U64", 8},
    {DType::F64, "F64", 8},
};

// Names the reference knows but swarmt does not load (sub-byte, exotic fp8, complex).
constexpr const char* kUnsupportedDTypes[] = {"F4", "F6_E2M3", "F6_E3M2", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64"};

const DTypeInfo& info_of(DType dtype) {
  for (const auto& info : kDTypes)
    if (info.dtype == dtype) return info;
  throw_internal_error("unknown DType value ", static_cast<int>(dtype));
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Rejects duplicate keys (nlohmann would silently keep the last one, so two tensors of the same name
// could hide each other) and absurd nesting, while nlohmann builds the document.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(const std::string& source) : source_(source) {}

  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        objects_.emplace_back();
        enter();
        break;
      case Json::parse_event_t::array_start:
        enter();
        break;
      case Json::parse_event_t::object_end:
        objects_.pop_back();
        --nesting_;
        break;
      case Json::parse_event_t::array_end:
        --nesting_;
        break;
      case Json::parse_event_t::key: {
        const std::string key = parsed.get<std::string>();
        if (!objects_.back().insert(key).second) report_duplicate(key);
        if (objects_.size() == 1) current_top_key_ = key;
        break;
      }
      case Json::parse_event_t::value:
        break;
    }
    return true;
  }

 private:
  void enter() {
    // A valid header nests three levels deep (root, entry, shape list).
    if (++nesting_ > 16) throw_input_error(source_, ": header JSON is nested too deeply to be a safetensors header");
  }

  [[noreturn]] void report_duplicate(const std::string& key) const {
    if (objects_.size() == 1) {
      if (key == "__metadata__") throw_input_error(source_, ": __metadata__ appears twice in the header");
      throw_input_error(source_, ": tensor '", key, "' appears twice in the header (duplicate tensor name)");
    }
    if (current_top_key_ == "__metadata__")
      throw_input_error(source_, ": __metadata__ field '", key, "' appears twice");
    throw_input_error(source_, ": tensor '", current_top_key_, "': field '", key, "' appears twice");
  }

  const std::string& source_;
  std::vector<std::set<std::string>> objects_;
  std::string current_top_key_;
  int nesting_ = 0;
};

// Reads one tensor entry; `where` is "<source>: tensor '<name>'".
TensorEntry parse_entry(const std::string& name, const Json& value, const std::string& where) {
  SWARMT_CHECK_INPUT(value.is_object(), where, ": entry must be a JSON object with dtype, shape and data_offsets (got ",
                     json_preview(value), ")");
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    SWARMT_CHECK_INPUT(key == "dtype" || key == "shape" || key == "data_offsets", where, ": unexpected field '", key,
                       "' (an entry has exactly dtype, shape and data_offsets)");
  }
  for (const char* required : {"dtype", "shape", "data_offsets"})
    SWARMT_CHECK_INPUT(value.contains(required), where, ": missing field '", required, "'");

  TensorEntry entry;
  entry.name = name;

  const Json& dtype = value["dtype"];
  SWARMT_CHECK_INPUT(dtype.is_string(), where, ": dtype must be a string such as \"F32\" (got ", json_preview(dtype), ")");
  const std::string dtype_text = dtype.get<std::string>();
  if (!parse_dtype(dtype_text, &entry.dtype)) {
    for (const char* unsupported : kUnsupportedDTypes)
      if (dtype_text == unsupported)
        throw_input_error(where, ": dtype ", dtype_text, " is not supported by swarmt (sub-byte, exotic fp8 or complex)");
    throw_input_error(where, ": unknown dtype ", json_preview(dtype));
  }

  const Json& shape = value["shape"];
  SWARMT_CHECK_INPUT(shape.is_array(), where, ": shape must be a list of non-negative integers (got ", json_preview(shape), ")");
  const uint64_t element_size = dtype_size(entry.dtype);
  uint64_t expected_bytes = element_size;
  for (const Json& dim : shape) {
    SWARMT_CHECK_INPUT(dim.is_number_integer(), where, ": shape must be a list of non-negative integers (got ",
                       json_preview(shape), ")");
    SWARMT_CHECK_INPUT(dim.is_number_unsigned(), where, ": shape ", json_preview(shape), " has a negative dimension");
    const uint64_t d = dim.get<uint64_t>();
    SWARMT_CHECK_INPUT(d <= kMaxSafetensorsDim, where, ": dimension ", d, " in shape ", json_preview(shape),
                       " exceeds the 2^48 limit");
    entry.shape.push_back(static_cast<int64_t>(d));
    // numel * element size must fit in 64 bits (the data offsets are 64-bit).
    SWARMT_CHECK_INPUT(!__builtin_mul_overflow(expected_bytes, d, &expected_bytes), where, ": shape ", json_preview(shape),
                       " of ", dtype_text, " is too large (its byte size overflows 64 bits)");
  }

  const Json& offsets = value["data_offsets"];
  const bool two_integers = offsets.is_array() && offsets.size() == 2 && offsets[0].is_number_unsigned() &&
                            offsets[1].is_number_unsigned();
  SWARMT_CHECK_INPUT(two_integers, where, ": data_offsets must be two non-negative integers [begin, end] (got ",
                     json_preview(offsets), ")");
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  SWARMT_CHECK_INPUT(entry.begin <= entry.end, where, ": data_offsets [", entry.begin, ", ", entry.end,
                     "] are not ordered (begin > end)");
  SWARMT_CHECK_INPUT(entry.nbytes() == expected_bytes, where, ": shape ", shape_to_string(entry.shape), " of ",
                     dtype_text, " needs ", expected_bytes, " bytes but data_offsets [", entry.begin, ", ", entry.end,
                     "] span ", entry.nbytes());
  return entry;
}

std::map<std::string, std::string> parse_metadata(const Json& value, const std::string& source) {
  SWARMT_CHECK_INPUT(value.is_object(), source, ": __metadata__ must be an object of strings (got ", json_preview(value), ")");
  std::map<std::string, std::string> out;
  for (auto it = value.begin(); it != value.end(); ++it) {
    SWARMT_CHECK_INPUT(it.value().is_string(), source, ": __metadata__ field '", it.key(),
                       "' must be a string (got ", json_preview(it.value()), ")");
    out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

// The entries must tile the data section exactly: sorted by offset, the first starts at 0, each starts
// where the previous ends, the last ends at the end of the section.
void check_coverage(const std::vector<TensorEntry>& sorted, uint64_t data_bytes, const std::string& source) {
  uint64_t cursor = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& e : sorted) {
    if (e.begin < cursor) {
      throw_input_error(source, ": tensors '", previous->name, "' [", previous->begin, ", ", previous->end, "] and '",
                        e.name, "' [", e.begin, ", ", e.end, "] overlap");
    }
    if (e.begin > cursor) {
      throw_input_error(source, ": gap of ", e.begin - cursor, " bytes before tensor '", e.name, "' (data_offsets [",
                        e.begin, ", ", e.end, "]",
                        previous ? str_cat(", previous tensor '", previous->name, "' ends at ", cursor) : std::string(),
                        "): tensors must cover the data section without holes");
    }
    cursor = e.end;
    previous = &e;
  }
  SWARMT_CHECK_INPUT(cursor == data_bytes, source, ": ", data_bytes - cursor, " bytes after the last tensor are not ",
                     "covered by any tensor (data section is ", data_bytes, " bytes, tensors end at ", cursor, ")");
}

}  // namespace

const char* dtype_name(DType dtype) { return info_of(dtype).name; }
size_t dtype_size(DType dtype) { return info_of(dtype).size; }

bool parse_dtype(const std::string& name, DType* out) {
  for (const auto& info : kDTypes) {
    if (name == info.name) {
      *out = info.dtype;
      return true;
    }
  }
  return false;
}

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (const auto& info : kDTypes) out.push_back(info.dtype);
  return out;
}

int64_t TensorEntry::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const TensorEntry* SafetensorsHeader::find(const std::string& name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tensors[it->second];
}

SafetensorsHeader parse_safetensors_header(const uint8_t* data, size_t size, const std::string& source) {
  SWARMT_CHECK_INPUT(size >= 8, source, ": file is too short to be safetensors (", size,
                     " bytes; the 8-byte header length is missing)");
  SafetensorsHeader header;
  header.header_bytes = read_u64_le(data);
  SWARMT_CHECK_INPUT(header.header_bytes <= kMaxSafetensorsHeaderBytes, source, ": header length ", header.header_bytes,
                     " exceeds the limit of ", kMaxSafetensorsHeaderBytes, " bytes (corrupt file, or not safetensors)");
  SWARMT_CHECK_INPUT(header.header_bytes <= size - 8, source, ": header length ", header.header_bytes,
                     " runs past the end of the file (", size, " bytes; truncated file?)");
  header.data_start = 8 + header.header_bytes;
  header.data_bytes = size - header.data_start;

  const char* text = reinterpret_cast<const char*>(data + 8);
  Json root;
  try {
    DuplicateKeyCheck check(source);
    root = Json::parse(text, text + header.header_bytes, std::ref(check), /*allow_exceptions=*/true);
  } catch (const Json::exception& e) {
    std::string msg = e.what();
    auto pos = msg.find("] ");
    if (pos != std::string::npos) msg = msg.substr(pos + 2);
    throw_input_error(source, ": header is not valid JSON: ", msg);
  }
  SWARMT_CHECK_INPUT(root.is_object(), source, ": header must be a JSON object (got ", json_preview(root), ")");

  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") {
      header.metadata = parse_metadata(it.value(), source);
      continue;
    }
    header.tensors.push_back(parse_entry(it.key(), it.value(), str_cat(source, ": tensor '", it.key(), "'")));
  }
  std::sort(header.tensors.begin(), header.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.name < b.name;
  });
  for (const TensorEntry& e : header.tensors) {
    SWARMT_CHECK_INPUT(e.end <= header.data_bytes, source, ": tensor '", e.name, "': data_offsets [", e.begin, ", ", e.end,
                       "] run past the end of the data section (", header.data_bytes, " bytes; truncated file?)");
  }
  check_coverage(header.tensors, header.data_bytes, source);
  for (size_t i = 0; i < header.tensors.size(); ++i) header.index[header.tensors[i].name] = i;
  return header;
}

}  // namespace swarmt
