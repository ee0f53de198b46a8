#include "swarmt/train/memory_check.h"

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"

namespace swarmt::train {

TrainingFootprint estimate_training_memory(const models::CausalLM& model, int64_t trainable_parameters,
                                           int64_t tokens_per_row) {
  auto& m = const_cast<models::CausalLM&>(model);  // the accessors are not const-qualified
  TrainingFootprint f;
  f.fixed_bytes = 4 * m.num_parameters() + 12 * trainable_parameters;
  f.bytes_per_row = tokens_per_row * (64 * m.hidden_size() * m.num_layers() + 8 * m.vocab_size());
  return f;
}

void check_training_fits(const models::CausalLM& model, int64_t trainable_parameters, int64_t tokens_per_row,
                         int64_t batch_size, int64_t grad_accum, const std::string& source) {
  const TrainingFootprint f = estimate_training_memory(model, trainable_parameters, tokens_per_row);
  const int64_t rows = batch_size / std::max<int64_t>(1, grad_accum);
  const int64_t needed = f.fixed_bytes + rows * f.bytes_per_row;
  const int64_t available = available_memory_bytes();
  if (available < 0 || needed <= available) return;
  std::string fits;
  const int64_t max_rows = f.bytes_per_row > 0 ? (available - f.fixed_bytes) / f.bytes_per_row : 0;
  if (max_rows >= 1) {
    int64_t accum = grad_accum;
    while (batch_size / accum > max_rows || batch_size % accum != 0) ++accum;
    fits = str_cat("at most ", max_rows, " rows per micro-batch fit: set training.grad_accum to ", accum,
                   " (same batch_size, ", batch_size / accum, " rows per micro-batch)");
  } else {
    fits = str_cat("not even one row of ", tokens_per_row, " tokens fits beside the model and optimizer state (",
                   format_bytes(f.fixed_bytes), "): use shorter sequences or a smaller model");
  }
  check_memory_fits(needed, str_cat(source, ": training (", rows, " rows of ", tokens_per_row, " tokens per micro-batch)"),
                    fits);
}

}  // namespace swarmt::train
