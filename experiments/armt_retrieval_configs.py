#!/usr/bin/env python3
"""Writes the training configs of the ARMT retrieval study (experiments/armt_retrieval.sh) into a work directory.

The task is the token-level associative retrieval of the ARMT 2024 paper, in the form of swarmt's `recall`
task (docs/data.md): keys, values and filler are disjoint byte ids; a fact is the two tokens "key value";
a question repeats the key and the model must predict its value. Segments are T = 16 tokens.

Ids: 8 keys 'a'-'h', 8 values 'A'-'H', filler bytes 128-255. Keys are letters the pretrained base has
seen: the recall task's default keys (bytes 1-64) never occur in the essay text, and with tied embeddings
a byte that never occurs drifts to the same vector as every other unseen byte (cosine 0.98 between those
keys, and with the filler, in the pilots' base), so a key would not be told from the filler by content.

The recipe (full mode; quick mode cuts every budget so that the study fits in 10 minutes):
  base         a Llama-architecture byte model (4 layers, d 128) pretrained as a language model on the
               built-in essay text at 256 tokens (the pretrained decoder ARMT wraps);
  base_recall  the base fine-tuned on recall inside its own context (64 tokens, two then four facts,
               every key asked three times): what a model of this size does with the facts in its context.
               ARMT and the full-attention baseline start from `base`, not from it: a run that wrapped
               `base_recall` (questions inside a segment kept in training) learned less through the memory
               and lost most of its in-context recall anyway (docs/results/README.md);
  armt         ARMT over base (4 memory tokens, d_mem 32, all layers, the plain delta rule: `use_denom`
               false, docs/armt.md; with the normaliser the same recipe retrieved five facts at 49-56%,
               docs/results/README.md), three phases:
                 s2  2 segments, always two facts, both in the first segment and asked in the second: the
                     memory must bind each key to its value in one write (the stage where binding appears;
                     a curriculum that starts from one fact, or writes facts one segment at a time, learned
                     to keep the latest value instead: docs/results/README.md);
                 s4  4 segments, two or three facts anywhere, each asked three times, 16-44 tokens after it;
                 s8  8 segments, three to five facts (four or five in 75% of the examples), each asked three
                     times, 16-110 tokens after it (asking once gave four or five answers to learn from per
                     example, and the model learned to keep the latest fact: docs/results/README.md);
  swax_base    a SWAX model of the base's size (mLSTM and sliding-window attention, "MS"), pretrained as base is;
  armt_swax    the same ARMT recipe over swax_base (trained with `--swax-base`; neither paper wraps a hybrid);
  armt_seed2   the same ARMT recipe with another seed for the memory's initialisation and the data order
               (trained with `--second-seed`);
  armt_noread  the same ARMT recipe with memory tokens that do not read the memory (`memory_tokens_read`
               false, docs/armt.md): what a segment writes is computed from that segment alone (trained with
               `--no-read`; with `--second-seed` also armt_noread_seed2);
  armt_gate    the no-read arm with a gate on every read (`read_gate` true, docs/armt.md): each position
               scales what it reads by a sigmoid of its own hidden state, so the filler can leave the memory
               unread (trained with `--read-gate`; with `--second-seed` also armt_gate_seed2);
  armt_sep     the no-read arm with a separate write pass (`separate_write_pass` true, docs/armt.md): a second
               pass of the base over each segment and its memory tokens, in which nothing reads, computes the
               write, so the keys a segment writes are a function of that segment alone; in one pass the memory
               tokens attend to the segment's tokens after they read the memory, and what segment s stored
               enters the keys of segment s + 1 (trained with `--separate-write`; with `--second-seed` also
               armt_sep_seed2);
  armt_linear  the no-read arm with signed keys (`feature_map` "linear", docs/armt.md): φ(x) = x, L2-normalised,
               as DeltaNet's keys, instead of DPFP's non-negative features; with DPFP two keys overlap unless
               their supports are disjoint, and each later write moves what an earlier key reads back (trained
               with `--linear-keys`; with `--second-seed` also armt_linear_seed2; measured level with the
               no-read arm inside the training length and worse beyond it: docs/results/README.md §2);
  armt_lm      the no-read arm after a continued language-model phase (essay text over 2 -> 4 -> 8 segments,
               loss on every token; trained with `--recipe`, as are the next two);
  armt_denom, armt_denom_nogamma
               the normalised rule (`use_denom` true) with and without the gamma correction, no-read, the
               phases s2 and s4 only: the gamma ablation (the plain rule keeps no z for gamma to correct);
  base8        the base with 8 layers instead of 4, pretrained as base is (experiments/armt_memory_layers.sh;
               with `--eight-layers` also wrapped like armt_noread as armt8_noread, beside full8_<n>, the
               fair baseline's stages over base8);
  base_wide    the base twice as wide (d 256, 8 heads of 32, 768 MLP units), pretrained as base is (with
               `--wide-base` also wrapped like armt_noread as armt_wide_noread, beside full_wide_<n>, the fair
               baseline's stages over base_wide): whether a base that binds facts better in its own context
               carries more of them through the memory (measured at the end of s4 at lr 2e-3 and 1e-3: it
               carries fewer, and full attention over it binds no better: docs/results/README.md §2);
  layers_<arm> ARMT over base8 with memory in a subset of its layers (LAYER_SUBSETS): the phases s2 and s4
               of armt's recipe, 1500 steps each (experiments/armt_memory_layers.sh);
  full_<n>     the fair baseline: base with full attention trained on the same task configs (the same
               distribution of sequences), steps, batch, learning rate and schedule, one `swarmt train`
               per ARMT phase, each at that phase's length n T (in distribution up to 8T);
  armt_probe   the no-read arm trained on the probes' own layout (`"layout": "probe"`, docs/data.md; trained
               with `--probe-layout`, with `--second-seed` also armt_probe_seed2): one fact per segment, every
               key asked once after all of them, in a random order (the 2024 paper's associative retrieval),
               three phases (PROBE_PHASES): 4 segments with two facts, 8 with three, 12 with five. The study's
               own data puts facts anywhere and asks each three times; asked in a random order its arms
               answer five facts under half, this one about three in five (docs/results/README.md §2);
  full_probe_<n>
               armt_probe's fair baseline: full attention over base on the same data, steps, batch, learning
               rate and schedule, one `swarmt train` per phase (in distribution up to 12T);
  armt_hidden, full_hidden_<n>
               armt_probe's phases with no answer a model can give without binding keys to values
               (HIDDEN_PHASES: distinct values, each question followed by filler instead of its answer), after
               the study's two-segment phase; trained with `--hidden-answers`. With the probes' defaults a model
               that knows the stated values but not which key holds which answers five facts at about 56%
               (the key-blind floor `swarmt eval recall` reports); here it is right one time in K;
  base_bind    a base of the same shape pretrained from random initialisation on in-context recall
               (BIND_TASK: four facts in a row, then their questions, 32 tokens, lr 3e-3): the language-model
               base fine-tuned on the same task stays at the key-blind loss for thousands of steps;
  armt_bind, full_bind_<n>
               ARMT over base_bind on the probe layout with no key-blind answer (BIND_PHASES), and its fair
               baseline over base_bind (trained with `--bind-base`);
  armt_probe_rw, full_probe_rw_20
               the associative retrieval with rewrites (REWRITE_PHASE): armt_probe and full_probe_12 each
               trained on, for the same steps, on the probe layout with every key stated three times (two
               rewrites, each round in a new order) and the latest value asked, 20 segments.
"""
import json
import os
import sys

T = 16
IDS = {"keys": [97, 105], "values": [65, 73], "filler": [128, 256]}
PHASES = [  # ARMT phase = one full-attention stage: segments, recall task
    (2, {"pairs": [[0, 2]], "distances": [[1, 16, 28]]}),
    (4, {"pairs": [[0, 2], [0.4, 3]], "queries_per_pair": 3, "distances": [[1, 16, 44]]}),
    (8, {"pairs": [[0, 3], [0.25, 4], [0.5, 5]], "queries_per_pair": 3, "distances": [[1, 16, 110]]}),
]
# The probe layout's phases (armt_probe, full_probe_<n>): facts `gap` = T - 2 apart, so each sits alone in a
# segment wherever the random lead-in ends; the questions start d tokens after the first fact (d from the
# band, kept to what fits) and ask every key once in a random order (the layout's default).
PROBE_PHASES = [
    (4, {"layout": "probe", "gap": T - 2, "pairs": 2, "distances": [[1, 16, 48]]}),
    (8, {"layout": "probe", "gap": T - 2, "pairs": 3, "distances": [[1, 32, 96]]}),
    (12, {"layout": "probe", "gap": T - 2, "pairs": 5, "distances": [[1, 80, 112]]}),
]
# The same phases with no answer that a model can give without the key (armt_hidden, full_hidden_<n>): the
# values of an example are distinct and each question is followed by filler, not its answer, so neither the
# most frequent value nor the values already given tell it (with both, a model that does not bind keys to
# values is right 1 time in K; with the probes' defaults, 56.3% for five facts in expectation:
# key_blind_chances, docs/data.md).
# First the binding stage of the study's recipe (PHASES[0], two facts written at once and asked in the next
# segment), which the probe-layout arm, one fact per segment from the start, did not have.
HIDDEN_PHASES = [PHASES[0]] + [(segments, dict(task, distinct_values=True, hidden_answers=True))
                               for segments, task in PROBE_PHASES]
# base_bind's pretraining: in-context recall (multi-query associative recall) from random initialisation, four
# facts in a row and their questions, no answer given away (distinct values, answers hidden), 32 tokens.
BIND_TASK = {"layout": "probe", "gap": 0, "pairs": 4, "distances": [[1, 8, 24]], "distinct_values": True,
             "hidden_answers": True}
# ARMT over base_bind (armt_bind) and its fair baseline (full_bind_<n>): first two facts written at once (both
# in the first segment, asked in the second; the learning rate held, as in the pilot where the memory left
# the key-blind loss after about 700 steps), then the probe layout with no key-blind answer, one fact per
# segment, 2 -> 3 -> 5 facts. Without the first phase the memory stayed at the key-blind loss in every phase.
BIND_FIRST = (2, {"layout": "probe", "gap": 0, "pairs": 2, "distances": [[1, 16, 26]], "distinct_values": True,
                  "hidden_answers": True})
BIND_PHASES = [BIND_FIRST] + [(segments, dict(task, distinct_values=True, hidden_answers=True))
                              for segments, task in PROBE_PHASES]
# The rewrite stage after them: five keys, each stated in three rounds, the latest value asked.
REWRITE_PHASE = (20, {"layout": "probe", "gap": T - 2, "pairs": 5, "rewrites": 2, "distances": [[1, 80, 112]]})
BUDGETS = {  # mode -> steps ("layer_phase": the layer study's s2 and s4, shorter than armt's so that its five
             # arms over the 8-layer base train in about an hour on 2 cores)
    "full": {"base": 400, "base_recall": 1500, "phase": [2000, 2000, 3000], "layer_phase": [1500, 1500],
             "lm_phase": [200, 200, 200], "probe_phase": [1500, 1500, 2000],
             "rewrite_phase": 800, "hidden_phase": [2000, 1500, 1500, 2000],
             "base_bind": 3000, "bind_phase": [1500, 1000, 1000, 1500]},
    "quick": {"base": 100, "base_recall": 200, "phase": [300, 200, 150], "layer_phase": [200, 100],
              "lm_phase": [20, 20, 20], "probe_phase": [200, 150, 100],
              "rewrite_phase": 50, "hidden_phase": [150, 150, 100, 100],
              "base_bind": 300, "bind_phase": [150, 100, 100, 100]},
}
BATCH = 32
LR = 0.002
WEIGHT_DECAY = 0.01
WARMUP_FRACTION = 0.05
MODEL = {
    "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 4, "head_dim": 32, "intermediate_size": 384, "vocab_size": 259, "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0, "tie_word_embeddings": True, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256,
}
# The base twice as wide: 3.48 M parameters against 0.89 M (`swarmt model describe`).
MODEL_WIDE = dict(MODEL, hidden_size=256, num_attention_heads=8, num_key_value_heads=8, intermediate_size=768)
# The same size with SWAX's mixers (docs/swax.md): mLSTM and sliding-window attention alternating ("MS"), the
# window (64) wider than a segment with its memory tokens, so inside ARMT's segments both models see the whole
# segment; 887.6 k parameters against the Llama base's 886.3 k (`swarmt model describe`).
MODEL_SWAX = {
    "model_type": "swax", "layer_pattern": "MS", "hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 4, "head_dim": 32, "intermediate_size": 384, "vocab_size": 259, "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0, "tie_word_embeddings": True, "logit_soft_cap": 0, "sliding_window": 64,
    "mlstm_num_heads": 2, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256,
}
# Memory layers of the layer study over the 8-layer base: all; the middle-upper 20% (two layers, 5 and 6, the
# preset centred in the upper half); two controls of the same size at the bottom and at the top; every other
# layer (half of them).
LAYER_SUBSETS = {"all": "all", "middle_upper": "middle_upper:0.2", "bottom": [0, 1], "top": [6, 7],
                 "alternate": "alternate"}
ARMT = {"segment_size": T, "num_memory_tokens": 4, "d_mem": 32, "memory_layers": "all", "use_denom": False, "seed": 1}


def recall(task, loss="answer"):
    return {"type": "synthetic", "loss": loss,
            "tasks": [dict({"task": "recall", "queries_per_pair": 1}, **IDS, **task)]}


def training(steps, lr, seed, **extra):
    t = {"max_steps": steps, "batch_size": BATCH, "optimizer": {"lr": lr, "weight_decay": WEIGHT_DECAY},
         "lr_schedule": {"type": "cosine", "warmup_steps": max(int(WARMUP_FRACTION * steps), 1), "min_ratio": 0.1},
         "clip_grad_norm": 1.0, "log_every": 20, "eval_every": max(steps // 4, 1), "eval_batches": 2,
         "checkpoint_every": max(steps // 2, 1), "seed": seed}
    t.update(extra)
    return t


def configs(work, b):
    out = {}
    out["base_train.json"] = {
        "model": MODEL, "tokenizer": "byte", "sequence_length": 256,
        "data": {"train": {"type": "synthetic", "tasks": [{"task": "essay"}]}},
        "training": dict(training(b["base"], 0.003, 1), batch_size=16)}
    out["swax_base_train.json"] = dict(out["base_train.json"], model=MODEL_SWAX)
    out["base8_train.json"] = dict(out["base_train.json"], model=dict(MODEL, num_hidden_layers=8))
    out["base_wide_train.json"] = dict(out["base_train.json"], model=MODEL_WIDE)
    # From random initialisation: the language-model base, fine-tuned on this task, stays at the key-blind
    # loss (ln 4) for thousands of steps at lr 2e-3 and 3e-3, where a fresh model learns it in about a
    # thousand (docs/results/README.md §2).
    out["base_bind_train.json"] = {
        "model": MODEL, "tokenizer": "byte", "sequence_length": 2 * T,
        "data": {"train": recall(BIND_TASK)},
        "training": dict(training(b["base_bind"], 0.003, 1),
                         lr_schedule={"type": "cosine", "warmup_steps": 200, "min_ratio": 0.1})}
    out["base_recall_train.json"] = {
        "init_from": f"{work}/base", "sequence_length": 4 * T,
        "data": {"train": recall({"pairs": [[0, 2], [0.2, 4]], "queries_per_pair": 3, "distances": [[1, 3, 20]]})},
        "training": training(b["base_recall"], LR, 2)}
    def phase(segments, task, steps, min_lr_ratio=0.1):
        return {"name": f"s{segments}", "data": {"train": recall(task)},
                "curriculum": {"segments": [segments], "steps": [steps], "warmup_fraction": WARMUP_FRACTION,
                               "schedule": "cosine", "min_lr_ratio": min_lr_ratio}}

    phases = [phase(segments, task, steps) for (segments, task), steps in zip(PHASES, b["phase"])]
    probe_phases = [phase(segments, task, steps) for (segments, task), steps in zip(PROBE_PHASES, b["probe_phase"])]
    hidden_phases = [phase(segments, task, steps) for (segments, task), steps in zip(HIDDEN_PHASES, b["hidden_phase"])]
    bind_phases = [phase(segments, task, steps, 1.0 if i == 0 else 0.1)
                   for i, ((segments, task), steps) in enumerate(zip(BIND_PHASES, b["bind_phase"]))]

    def full_attention(base, prefix, stages, budget):  # the fair baseline's stages, one per ARMT phase
        previous = f"{work}/{base}"
        for (segments, task), steps in zip(stages, budget):
            name = f"{prefix}_{segments}"
            out[name + ".json"] = {"init_from": previous, "sequence_length": segments * T,
                                   "data": {"train": recall(task)}, "training": training(steps, LR, 1)}
            previous = f"{work}/{name}"

    for base, prefix in (("base", "full"), ("base8", "full8"), ("base_wide", "full_wide")):  # over each base
        full_attention(base, prefix, PHASES, b["phase"])
    full_attention("base", "full_probe", PROBE_PHASES, b["probe_phase"])
    full_attention("base", "full_hidden", HIDDEN_PHASES, b["hidden_phase"])
    full_attention("base_bind", "full_bind", BIND_PHASES, b["bind_phase"])
    full_attention(f"full_probe_{PROBE_PHASES[-1][0]}", "full_probe_rw", [REWRITE_PHASE], [b["rewrite_phase"]])
    def armt(seed, phases=phases, **memory):
        return {"armt": dict(ARMT, seed=seed, **memory), "freeze_base": False, "output": "merged", "phases": phases,
                "training": {"batch_size": BATCH, "optimizer": {"lr": LR, "weight_decay": WEIGHT_DECAY},
                             "clip_grad_norm": 1.0, "log_every": 20, "eval_batches": 2, "checkpoint_every": 500,
                             "seed": seed}}
    out["armt_train.json"] = armt(1)
    out["armt_seed2_train.json"] = armt(2)
    out["armt_noread_train.json"] = armt(1, memory_tokens_read=False)
    out["armt_noread_seed2_train.json"] = armt(2, memory_tokens_read=False)
    out["armt_gate_train.json"] = armt(1, memory_tokens_read=False, read_gate=True)
    out["armt_gate_seed2_train.json"] = armt(2, memory_tokens_read=False, read_gate=True)
    out["armt_sep_train.json"] = armt(1, memory_tokens_read=False, separate_write_pass=True)
    out["armt_sep_seed2_train.json"] = armt(2, memory_tokens_read=False, separate_write_pass=True)
    out["armt_linear_train.json"] = armt(1, memory_tokens_read=False, feature_map="linear")
    out["armt_linear_seed2_train.json"] = armt(2, memory_tokens_read=False, feature_map="linear")
    out["armt_probe_train.json"] = armt(1, probe_phases, memory_tokens_read=False)
    out["armt_probe_seed2_train.json"] = armt(2, probe_phases, memory_tokens_read=False)
    out["armt_hidden_train.json"] = armt(1, hidden_phases, memory_tokens_read=False)
    out["armt_hidden_seed2_train.json"] = armt(2, hidden_phases, memory_tokens_read=False)
    out["armt_bind_train.json"] = armt(1, bind_phases, memory_tokens_read=False)
    out["armt_bind_seed2_train.json"] = armt(2, bind_phases, memory_tokens_read=False)
    # Trained on from armt_probe (`--init`, which brings its memory config), so no "armt" here.
    rewrite = armt(1, [phase(REWRITE_PHASE[0], REWRITE_PHASE[1], b["rewrite_phase"])])
    out["armt_probe_rw_train.json"] = {k: v for k, v in rewrite.items() if k != "armt"}
    # The recipe's parts (specs/armt.md §4), each against the no-read arm of the same seed: a continued
    # language-model phase over 2 -> 4 -> 8 segments of essay text (loss on every token) before the recall
    # phases; and the gamma correction, which only the normalised rule has (the study's plain rule keeps no
    # z), so its ablation is a pair of normalised-rule arms with and without it, over the phases s2 and s4.
    lm = {"name": "lm", "data": {"train": {"type": "synthetic", "tasks": [{"task": "essay"}]}},
          "curriculum": {"segments": [2, 4, 8], "steps": b["lm_phase"], "warmup_fraction": WARMUP_FRACTION,
                         "schedule": "cosine", "min_lr_ratio": 0.1}}
    out["armt_lm_train.json"] = armt(1, [lm] + phases, memory_tokens_read=False)
    for name, gamma in (("armt_denom", True), ("armt_denom_nogamma", False)):
        out[f"{name}_train.json"] = armt(1, phases[:2], memory_tokens_read=False, use_denom=True,
                                         gamma_correction=gamma)
    layer_phases = [phase(segments, task, steps) for (segments, task), steps in zip(PHASES, b["layer_phase"])]
    for arm, layers in LAYER_SUBSETS.items():
        out[f"layers_{arm}_train.json"] = armt(1, layer_phases, memory_layers=layers)
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in BUDGETS:
        raise SystemExit("usage: armt_retrieval_configs.py full|quick WORK_DIR")
    mode, work = sys.argv[1:]
    for name, config in configs(work, BUDGETS[mode]).items():
        with open(os.path.join(work, name), "w") as f:
            json.dump(config, f, indent=1)
    # The fair baselines' stages, in training order: the study's, then the probe layout's.
    print(" ".join(f"full_{segments}" for segments, _ in PHASES))
    print(" ".join(f"full_probe_{segments}" for segments, _ in PROBE_PHASES))
    print(f"full_probe_rw_{REWRITE_PHASE[0]}")
    print(" ".join(f"full_hidden_{segments}" for segments, _ in HIDDEN_PHASES))
    print(" ".join(f"full_bind_{segments}" for segments, _ in BIND_PHASES))


if __name__ == "__main__":
    main()
