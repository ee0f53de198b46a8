// Reading one pipeline component ({"type": "...", ...}) of a tokenizer.json, with error messages that
// give the file and the JSON path: "tokenizer.json: normalizer.normalizers[1].type 'Foo' is not
// supported (supported: NFC, ...)".
#pragma once

#include <string>

#include "swarmt/core/json.h"

namespace swarmt::tokenizer {

// Where a component sits: the file (`source`) and its JSON path inside it ("pre_tokenizer",
// "decoder.decoders[2]").
struct ComponentPath {
  std::string source;
  std::string path;

  ComponentPath child(const std::string& key) const { return {source, path + "." + key}; }
  ComponentPath element(const std::string& key, size_t index) const {
    return {source, path + "." + key + "[" + std::to_string(index) + "]"};
  }
  // A JsonView on the component object (throws if it is not an object).
  JsonView view(const Json& json) const;
  // "tokenizer.json: field 'pre_tokenizer.pattern'".
  std::string describe(const std::string& key) const;
};

// The component's "type" string; BadInput if the value is not an object with a string "type".
std::string component_type(const Json& json, const ComponentPath& where);

// BadInput "<source>: <path>.type '<type>' is not supported (supported: <supported>)".
[[noreturn]] void throw_unsupported_component(const ComponentPath& where, const std::string& type,
                                              const std::string& supported);

// A JSON array field of a component (e.g. Sequence's "normalizers"); BadInput if not an array.
const Json& component_list(const JsonView& view, const std::string& key);

// Real normalizer and decoder chains grow a text by a small factor (NFKC expands a code point to at
// most 18, "▁" for " " is 3 bytes for 1). Steps that each multiply the text compose exponentially (20
// Replace steps "a" -> "aa" turn 1 byte into 1 MiB), so a malformed tokenizer.json could exhaust memory
// on any input. A Sequence checks its text after every step against this bound and refuses the chain:
// BadInput "<where>: step <i> grew the text from <original> to <now> bytes (more than 64 times): the
// <what> chain multiplies its input".
constexpr size_t kMaxChainGrowth = 64;
constexpr size_t kChainGrowthSlack = 4096;
void check_chain_growth(const std::string& where, const char* what, size_t step, size_t original, size_t now);

// Options of Metaspace, shared by the pre-tokenizer and the decoder of that name.
enum class PrependScheme { Always, First, Never };
struct MetaspaceOptions {
  std::string replacement = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK
  PrependScheme prepend_scheme = PrependScheme::Always;
  bool split = true;
};
// Reads replacement (exactly one character), prepend_scheme (always|first|never; files older than that
// field carry add_prefix_space instead) and split.
MetaspaceOptions read_metaspace_options(const JsonView& view);

}  // namespace swarmt::tokenizer
