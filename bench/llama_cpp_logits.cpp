// The last position's logits of a token sequence, computed by llama.cpp: the other half of
// bench/decode_vs_llama_cpp.sh's check that both engines run the same model. Built by that script
// against the user's llama.cpp build; never part of swarmt's build.
//
//   llama_cpp_logits MODEL.gguf IDS OUT.f32 THREADS    (IDS: comma-separated token ids)
// Writes the vocabulary's logits as little-endian float32.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s MODEL.gguf IDS OUT.f32 THREADS\n", argv[0]);
    return 2;
  }
  std::vector<llama_token> ids;
  std::stringstream list(argv[2]);
  for (std::string item; std::getline(list, item, ',');) ids.push_back(static_cast<llama_token>(std::atoi(item.c_str())));
  const int threads = std::atoi(argv[4]);
  if (ids.empty() || threads < 1) {
    std::fprintf(stderr, "llama_cpp_logits: need token ids and a thread count\n");
    return 2;
  }
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (model == nullptr) {
    std::fprintf(stderr, "llama_cpp_logits: cannot load %s\n", argv[1]);
    return 1;
  }
  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(ids.size() + 16);
  params.n_batch = params.n_ubatch = static_cast<uint32_t>(ids.size());
  params.n_threads = params.n_threads_batch = threads;
  params.type_k = params.type_v = GGML_TYPE_F32;  // llama.cpp's default f16 cache would round K and V
  llama_context* ctx = llama_init_from_model(model, params);
  if (ctx == nullptr || llama_decode(ctx, llama_batch_get_one(ids.data(), static_cast<int32_t>(ids.size()))) != 0) {
    std::fprintf(stderr, "llama_cpp_logits: evaluation failed\n");
    return 1;
  }
  const float* logits = llama_get_logits_ith(ctx, -1);
  const int32_t vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* out = std::fopen(argv[3], "wb");
  if (out == nullptr || std::fwrite(logits, sizeof(float), static_cast<size_t>(vocab), out) != static_cast<size_t>(vocab)) {
    std::fprintf(stderr, "llama_cpp_logits: cannot write %s\n", argv[3]);
    return 1;
  }
  std::fclose(out);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
