// `swarmt forward`: logits of one sequence, for debugging against other implementations.
//   swarmt forward --model DIR (--ids 1,2,3 | --text TEXT) --out FILE.safetensors [--stream]
// Writes tensor "logits" (float32, [n_ids, vocab]) and "ids" (int64, [n_ids]).
#include <iostream>
#include <memory>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/infer/loaded_model.h"

namespace swarmt::cli {
namespace {

struct ForwardOptions {
  std::string model, ids, text, out, device = "cpu", dtype;
  bool stream = false;
  bool add_special_tokens = false;
  bool allow_nonfinite = false;
  bool ids_given = false, text_given = false;  // set after parsing: --text "" is given, and empty
};

int run_forward(const ForwardOptions& o) {
  SWARMT_CHECK_INPUT(o.ids_given != o.text_given, "give exactly one of --ids and --text");
  SWARMT_CHECK_INPUT(!o.text_given || !o.text.empty(), "--text is empty: give the text to run");
  infer::InferenceOptions load;
  load.device = parse_device(o.device);
  load.dtype = parse_dtype(o.dtype);
  load.allow_nonfinite = o.allow_nonfinite;
  auto model = infer::LoadedModel::load(o.model, load);
  std::vector<int64_t> ids;
  if (!o.ids.empty()) {
    ids = parse_id_list(o.ids, "--ids");
  } else {
    for (int32_t id : model.tokenizer().encode(o.text, o.add_special_tokens)) ids.push_back(id);
    SWARMT_CHECK_INPUT(!ids.empty(), "--text encodes to no tokens");
  }
  const int64_t vocab = model.model()->vocab_size();
  for (int64_t id : ids) SWARMT_CHECK_INPUT(id < vocab, "--ids: token id ", id, " is outside the vocabulary (", vocab, ")");
  auto tokens = at::tensor(ids, at::TensorOptions().dtype(at::kLong));
  at::Tensor logits;
  at::NoGradGuard no_grad;
  if (o.stream) {
    // Token by token through the streaming state: checks decoding against the full forward.
    auto stream = model.new_stream();
    std::vector<at::Tensor> rows;
    for (int64_t i = 0; i < tokens.size(0); ++i) rows.push_back(stream->feed(tokens.narrow(0, i, 1)));
    logits = at::stack(rows);
  } else {
    logits = model.forward(tokens.unsqueeze(0)).squeeze(0);
  }
  save_safetensors(o.out, {{"logits", logits.to(at::kFloat).cpu()}, {"ids", tokens}});
  std::cerr << "wrote logits [" << logits.size(0) << ", " << logits.size(1) << "] to " << o.out << std::endl;
  return 0;
}

}  // namespace

void register_forward(CLI::App& app, const GlobalOptions&, CommandList& commands) {
  auto o = std::make_shared<ForwardOptions>();
  CLI::App* cmd = app.add_subcommand("forward", "Write the logits of one sequence to a safetensors file");
  cmd->add_option("-m,--model", o->model, "Model directory")->required();
  CLI::Option* ids = cmd->add_option("--ids", o->ids, "Token ids, e.g. 1,2,3");
  CLI::Option* text = cmd->add_option("--text", o->text, "Text to tokenize with the model's tokenizer");
  cmd->add_flag("--add-special-tokens", o->add_special_tokens, "Apply the tokenizer's post-processor to --text");
  cmd->add_option("-o,--out", o->out, "Output .safetensors file (tensor 'logits' [n, vocab] float32)")->required();
  cmd->add_flag("--stream", o->stream, "Compute through the streaming state, one token at a time");
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Weights dtype: float32, bfloat16 (default: as stored)");
  cmd->add_flag("--allow-nonfinite", o->allow_nonfinite, "Load weights that hold NaN or Inf (refused otherwise)");
  commands.push_back({cmd, [o, ids, text]() {
                        o->ids_given = ids->count() > 0;
                        o->text_given = text->count() > 0;
                        return run_forward(*o);
                      }});
}

}  // namespace swarmt::cli
