#include "swarmt/models/armt_cost.h"

#include "swarmt/core/error.h"

namespace swarmt::models {

DecoderShape DecoderShape::from_config(const Json& config, const std::string& source) {
  JsonView v(config, source);
  const std::string type = v.get_string("model_type");
  SWARMT_CHECK_INPUT(type == "llama" || type == "gemma3_text" || type == "gemma3", source,
                     ": FLOP counts cover Llama-architecture bases (llama, gemma3_text); this base is '", type, "'");
  DecoderShape s;
  s.layers = v.get_int("num_hidden_layers");
  s.hidden = v.get_int("hidden_size");
  s.heads = v.get_int("num_attention_heads");
  s.kv_heads = v.get_int("num_key_value_heads", s.heads);
  s.head_dim = v.get_int("head_dim", s.hidden / std::max<int64_t>(1, s.heads));
  s.intermediate = v.get_int("intermediate_size");
  s.vocab = v.get_int("vocab_size");
  return s;
}

double decoder_layer_flops(const DecoderShape& s, double n, double pairs) {
  const double d = static_cast<double>(s.hidden), h = static_cast<double>(s.head_dim);
  const double H = static_cast<double>(s.heads), K = static_cast<double>(s.kv_heads);
  const double projections = 2 * n * d * (H + 2 * K) * h + 2 * n * H * h * d;
  const double attention = 4 * H * h * pairs;
  const double mlp = 6 * n * d * static_cast<double>(s.intermediate);
  return projections + attention + mlp;
}

double full_attention_forward_flops(const DecoderShape& s, int64_t tokens) {
  const double n = static_cast<double>(tokens);
  return static_cast<double>(s.layers) * decoder_layer_flops(s, n, n * (n + 1) / 2) +
         2 * n * static_cast<double>(s.hidden) * static_cast<double>(s.vocab);
}

double armt_forward_flops(const DecoderShape& s, const ArmtConfig& c, int64_t memory_layers, int64_t tokens) {
  const double d = static_cast<double>(s.hidden), M = static_cast<double>(c.num_memory_tokens);
  const double dm = static_cast<double>(c.d_mem), Hm = static_cast<double>(c.num_heads);
  const double Dk = static_cast<double>(c.key_dim());
  double total = 0;
  const int64_t T = c.segment_size, segments = (tokens + T - 1) / T;
  for (int64_t seg = 0; seg < segments; ++seg) {
    const bool last = seg + 1 == segments;
    const double real = static_cast<double>(std::min(T, tokens - seg * T));
    const double n = real + (last ? 0 : M);
    total += static_cast<double>(s.layers) * decoder_layer_flops(s, n, n * (n + 1) / 2);
    // A separate write pass runs the real tokens once more, reading, apart from the pass that writes.
    if (c.separate_write_pass && !last) {
      total += static_cast<double>(s.layers) * decoder_layer_flops(s, real, real * (real + 1) / 2);
    }
    double memory = 0;
    if (seg > 0) {
      memory += 2 * n * d * dm + 2 * n * Dk * d / Hm + 2 * n * Dk;
      if (c.read_gate) memory += 2 * n * d * Hm + n * d;
    }
    if (!last) memory += 2 * M * d * (dm + d + Hm) + 4 * M * Dk * d / Hm + 2 * M * Dk;
    total += static_cast<double>(memory_layers) * memory;
  }
  return total + 2 * static_cast<double>(tokens) * d * static_cast<double>(s.vocab);
}

}  // namespace swarmt::models
