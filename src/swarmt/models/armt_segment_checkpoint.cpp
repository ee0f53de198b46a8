#include "swarmt/models/armt_segment_checkpoint.h"

#include <torch/csrc/autograd/custom_function.h>

#include "swarmt/core/error.h"
#include "swarmt/models/armt_model.h"

namespace swarmt::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What backward needs to rerun the segment (kept alive by the autograd graph through a capsule).
struct SegmentJob : torch::CustomClassHolder {
  ArmtModel* model = nullptr;
  std::vector<bool> empty;  // per memory layer: no write yet
  bool write = false;
  ForwardOptions options;
  at::Tensor doc_ids;
};

// Inputs are [x, A_0, z_0, A_1, z_1, ..., anchor]; outputs [hidden, A'_0, z'_0, ...] (states only when
// writing). `anchor` always requires grad, so the outputs join the graph even when nothing else does
// (first segment with frozen embeddings): the parameters used inside still receive their gradients.
std::vector<ops::AssocMemoryState> unpack_states(const SegmentJob& job, const variable_list& tensors, size_t first) {
  std::vector<ops::AssocMemoryState> states(job.empty.size());
  for (size_t s = 0; s < states.size(); ++s) {
    states[s].A = tensors[first + 2 * s];
    states[s].z = tensors[first + 2 * s + 1];
    states[s].empty = job.empty[s];
  }
  return states;
}

variable_list run(SegmentJob& job, const at::Tensor& x, std::vector<ops::AssocMemoryState>& states) {
  at::Tensor hidden = job.model->run_segment(x, states, job.write, job.options, job.doc_ids);
  variable_list out = {hidden};
  if (job.write) {
    for (const auto& s : states) {
      out.push_back(s.A);
      out.push_back(s.z);
    }
  }
  return out;
}

struct SegmentFunction : torch::autograd::Function<SegmentFunction> {
  static variable_list forward(AutogradContext* ctx, at::TensorList inputs, c10::intrusive_ptr<SegmentJob> job) {
    variable_list saved(inputs.begin(), inputs.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["job"] = c10::IValue::make_capsule(job);
    auto states = unpack_states(*job, saved, 1);
    variable_list out = run(*job, saved[0], states);
    // Outputs must not alias inputs (a state passed through unchanged would): clone those.
    for (auto& t : out)
      for (const auto& in : saved)
        if (t.is_same(in)) t = t.clone();
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto job = c10::static_intrusive_pointer_cast<SegmentJob>(ctx->saved_data["job"].toCapsule());
    variable_list saved = ctx->get_saved_variables();
    variable_list inputs;
    for (size_t i = 0; i + 1 < saved.size(); ++i) inputs.push_back(saved[i].detach().requires_grad_(true));
    variable_list outputs;
    {
      at::AutoGradMode enable(true);
      auto states = unpack_states(*job, inputs, 1);
      outputs = run(*job, inputs[0], states);
    }
    variable_list roots, grads;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (grad_outputs[i].defined() && outputs[i].requires_grad()) {
        roots.push_back(outputs[i]);
        grads.push_back(grad_outputs[i]);
      }
    }
    // Accumulates into the parameters' .grad (as the uncheckpointed graph would) and into the inputs.
    if (!roots.empty()) torch::autograd::backward(roots, grads);
    variable_list result;
    for (auto& in : inputs) result.push_back(in.grad());
    result.emplace_back();  // anchor
    result.emplace_back();  // job
    return result;
  }
};

}  // namespace

at::Tensor checkpointed_segment(ArmtModel& model, const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories,
                                bool write, const ForwardOptions& options, const at::Tensor& doc_ids) {
  auto job = c10::make_intrusive<SegmentJob>();
  job->model = &model;
  job->write = write;
  job->options = options;
  job->doc_ids = doc_ids;
  variable_list inputs = {x};
  for (const auto& m : memories) {
    job->empty.push_back(m.empty);
    inputs.push_back(m.A);
    inputs.push_back(m.z);
  }
  inputs.push_back(at::zeros({}, x.options().dtype(at::kFloat)).requires_grad_(true));  // anchor
  variable_list out = SegmentFunction::apply(at::TensorList(inputs), job);
  if (write) {
    for (size_t s = 0; s < memories.size(); ++s) {
      memories[s].A = out[1 + 2 * s];
      memories[s].z = out[2 + 2 * s];
      memories[s].empty = false;
    }
  }
  return out[0];
}

}  // namespace swarmt::models
