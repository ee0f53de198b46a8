#!/usr/bin/env python3
"""Writes the ARMT experiments' training configs into a work directory.

full:  configs/armt/*.json as they are (the recipe of scripts/armt_e2e.sh), data paths pointed at WORK;
quick: the same recipe with every budget cut so that both ARMT experiments fit in 10 minutes each.
Also writes armt_mid_train.json (memory in the middle-upper 20% of the layers only) and armt_low_train.json
(memory in the first layer only: a subset of the same size at the bottom, the control).
"""
import json
import os
import sys

QUICK = {  # file -> overrides (dotted paths; integers index lists)
    "tiny_base.json": {"training.max_steps": 150, "training.eval_every": 75, "training.lr_schedule.warmup_steps": 15},
    "tiny_base_answer.json": {"training.max_steps": 250, "training.batch_size": 16, "training.eval_every": 125,
                              "training.checkpoint_every": 125, "training.lr_schedule.warmup_steps": 15},
    "tiny_base_answer_2.json": {"training.max_steps": 100, "training.batch_size": 16, "training.eval_every": 50,
                                "training.checkpoint_every": 50, "training.lr_schedule.warmup_steps": 10},
    "tiny_curriculum.json": {"phases.0.curriculum.steps": [25], "phases.1.curriculum.steps": [25],
                             "phases.2.curriculum.steps": [25], "training.batch_size": 8,
                             "training.checkpoint_every": 25},
}
OUTPUTS = {"tiny_base.json": "base_train.json", "tiny_base_answer.json": "base_answer_1.json",
           "tiny_base_answer_2.json": "base_answer_2.json", "tiny_curriculum.json": "armt_train.json"}


def set_path(obj, dotted, value):
    keys = [int(k) if k.isdigit() else k for k in dotted.split(".")]
    for k in keys[:-1]:
        obj = obj[k]
    if isinstance(obj, dict) and keys[-1] not in obj:
        raise SystemExit(f"armt_configs: {dotted} is not in the config")
    obj[keys[-1]] = value


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("full", "quick"):
        raise SystemExit("usage: armt_configs.py CONFIG_DIR full|quick WORK_DIR")
    config_dir, mode, work = sys.argv[1:]
    for source, target in OUTPUTS.items():
        with open(os.path.join(config_dir, source)) as f:
            config = json.loads(f.read().replace("WORK", work))
        if mode == "quick":
            for path, value in QUICK[source].items():
                set_path(config, path, value)
        with open(os.path.join(work, target), "w") as f:
            json.dump(config, f, indent=1)
        if source == "tiny_curriculum.json":
            for name, layers in (("armt_mid", "middle_upper:0.2"), ("armt_low", [0])):
                config["armt"]["memory_layers"] = layers
                with open(os.path.join(work, name + "_train.json"), "w") as f:
                    json.dump(config, f, indent=1)


if __name__ == "__main__":
    main()
