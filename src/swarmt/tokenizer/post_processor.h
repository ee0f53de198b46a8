// Post-processors of tokenizer.json ("post_processor": {...}): what encode(text, add_special_tokens=true)
// adds around the ids of a single sequence.
//   TemplateProcessing  {single: [{SpecialToken: {id}} | {Sequence: {id: "A"}}], special_tokens: {name:
//                       {ids: [...]}}}: Gemma's <bos> + A
//   RobertaProcessing / BertProcessing  {cls: [token, id], sep: [token, id]}: cls + A + sep
//   ByteLevel           adds nothing (it only adjusts offsets, which we do not return)
//   Sequence            {processors: [...]} applied in order
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/component_json.h"

namespace swarmt::tokenizer {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Rewrites the ids of one encoded sequence.
  virtual void process(std::vector<int32_t>& ids) const = 0;
};

// `vocab_size` bounds the ids a post-processor may insert.
std::unique_ptr<PostProcessor> make_post_processor(const Json& json, const ComponentPath& where, int64_t vocab_size);

}  // namespace swarmt::tokenizer
