#!/usr/bin/env python3
"""Writes the training configs of the ARMT experiments into a work directory.

The recipe (full mode; quick mode cuts every budget so that an experiment fits in 10 minutes):
  base        a Llama-architecture model (4 layers, d 128, byte tokenizer) pretrained as a language model
              at context T = 256 on documents with facts and questions (loss on all tokens);
  base_qa     the base fine-tuned at context T on code-word questions with 0-2 distractor facts (loss on
              the answer): the pretrained decoder that answers from its own context;
  armt        ARMT over base_qa: a continued language-model phase over 2 -> 4 -> 8 segments (loss on all
              tokens), then the QA phase over 2 -> 4 -> 8 segments on a mixture of one-segment examples and
              longer ones with 0, 2 and 4 distractor facts, some with rewrites (experiments/armt_common.sh);
  full_*      the fair baseline: base_qa with full attention trained on the same files for the same steps,
              batch, learning rate and schedule, one `swarmt train` per curriculum stage;
  armt_nolm   the ablation without the continued-LM phase (the QA phase alone, same QA steps);
  armt_nogamma  the ablation without the gamma correction;
  armt_s2     the ARMT recipe with a second seed.
Every config reads its data from WORK (file names as in experiments/armt_common.sh).
"""
import copy
import json
import os
import sys

SEGMENT = 256
STAGES = [2, 4, 8]
BUDGETS = {  # mode -> budget of each stage
    "full": {"base_steps": 800, "base_qa_steps": 1200, "lm_steps": 40, "lm_batch": 8, "qa_steps": 120, "qa_batch": 16},
    "quick": {"base_steps": 150, "base_qa_steps": 200, "lm_steps": 5, "lm_batch": 4, "qa_steps": 15, "qa_batch": 8},
}
MODEL = {
    "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 4, "head_dim": 32, "intermediate_size": 384, "vocab_size": 259, "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0, "tie_word_embeddings": True, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256,
}
ARMT = {"segment_size": SEGMENT, "num_memory_tokens": 8, "d_mem": 32, "memory_layers": "all", "seed": 1}
LR = 0.001          # ARMT and the full-attention baseline
WEIGHT_DECAY = 0.01
WARMUP_FRACTION = 0.1


def qa(path, loss="answer"):
    return {"type": "jsonl_qa", "path": path, "loss": loss}


def training(steps, batch, lr, warmup, seed, weight_decay=0.1, **extra):
    t = {"max_steps": steps, "batch_size": batch, "optimizer": {"lr": lr, "weight_decay": weight_decay},
         "lr_schedule": {"type": "cosine", "warmup_steps": warmup, "min_ratio": 0.1}, "clip_grad_norm": 1.0,
         "log_every": 20, "eval_every": max(steps // 4, 1), "eval_batches": 2, "checkpoint_every": max(steps // 2, 1),
         "seed": seed}
    t.update(extra)
    return t


def base_configs(work, b):
    base = {"model": MODEL, "tokenizer": "byte", "sequence_length": SEGMENT,
            "data": {"train": qa(f"{work}/lm.jsonl", "all"), "validation": qa(f"{work}/lm_val.jsonl", "all")},
            "training": training(b["base_steps"], 16, 0.003, 30, 1)}
    base_qa = {"init_from": f"{work}/base", "sequence_length": SEGMENT,
               "data": {"train": qa(f"{work}/base_qa.jsonl"), "validation": qa(f"{work}/base_qa_val.jsonl")},
               "training": training(b["base_qa_steps"], 32, 0.003, 30, 2)}
    return {"base_train.json": base, "base_qa_train.json": base_qa}


def armt_phases(work, b, with_lm=True):
    """One phase per curriculum stage, each with the data file of its segment count (examples of 1 ... n
    segments, so that no example is cut to fit)."""
    phases = []
    for phase in (["lm"] if with_lm else []) + ["qa"]:
        for n in STAGES:
            data = {"train": qa(f"{work}/{phase}_{n}seg.jsonl", "all" if phase == "lm" else "answer")}
            if phase == "qa" and n == STAGES[-1]:
                data["validation"] = qa(f"{work}/qa_val.jsonl")
            phases.append({"name": f"{phase}{n}", "data": data,
                           "curriculum": {"segments": [n], "steps": [b[f"{phase}_steps"]],
                                          "warmup_fraction": WARMUP_FRACTION}})
    return phases


def armt_config(work, b, seed=1, with_lm=True, gamma=True):
    armt = dict(ARMT, seed=seed, gamma_correction=gamma)
    # Per-phase batch sizes are not a curriculum field: the LM phase's smaller batch is folded into its steps
    # (same tokens), so both phases run at the QA batch.
    return {"armt": armt, "freeze_base": False, "output": "auto", "phases": armt_phases(work, b, with_lm),
            "training": {"batch_size": b["qa_batch"], "optimizer": {"lr": LR, "weight_decay": WEIGHT_DECAY},
                         "clip_grad_norm": 1.0, "log_every": 10, "eval_batches": 2,
                         "checkpoint_every": b["qa_steps"], "seed": seed}}


def full_attention_chain(work, b):
    """One `swarmt train` per ARMT curriculum stage, each initialised from the previous one."""
    configs, previous = {}, f"{work}/base_qa"
    for phase, loss in (("lm", "all"), ("qa", "answer")):
        for n in STAGES:
            steps = b["lm_steps"] if phase == "lm" else b["qa_steps"]
            name = f"full_{phase}_{n}"
            configs[name + ".json"] = {
                "init_from": previous, "sequence_length": n * SEGMENT,
                "data": {"train": qa(f"{work}/{phase}_{n}seg.jsonl", loss)},
                "training": training(steps, b["qa_batch"], LR, max(int(WARMUP_FRACTION * steps), 1), 1,
                                     weight_decay=WEIGHT_DECAY)}
            previous = f"{work}/{name}"
    return configs


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in BUDGETS:
        raise SystemExit("usage: armt_configs.py full|quick WORK_DIR")
    mode, work = sys.argv[1:]
    b = dict(BUDGETS[mode])
    # The LM phase at the QA batch with the LM phase's tokens.
    b["lm_steps"] = max(b["lm_steps"] * b["lm_batch"] // b["qa_batch"], 1)
    configs = base_configs(work, b)
    configs["armt_train.json"] = armt_config(work, b)
    configs["armt_s2_train.json"] = armt_config(work, b, seed=2)
    configs["armt_nolm_train.json"] = armt_config(work, b, with_lm=False)
    configs["armt_nogamma_train.json"] = armt_config(work, b, gamma=False)
    configs.update(full_attention_chain(work, b))
    for name, config in configs.items():
        with open(os.path.join(work, name), "w") as f:
            json.dump(copy.deepcopy(config), f, indent=1)
    print(" ".join(f"full_{p}_{n}" for p in ("lm", "qa") for n in STAGES))


if __name__ == "__main__":
    main()
