#!/usr/bin/env python3
"""Collects the ARMT retrieval study (experiments/armt_retrieval.sh) into results.json and README.md.

Every cell is a recall accuracy with its 95% Wilson interval, read from the `swarmt eval recall` reports in
WORK/eval/<probe set>/<model>/ (a model's cells of one set may come from several reports, e.g. the
full-attention baseline with a RoPE factor per length). Every number shown is in results.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from armt_report import cell_text, stage_info, svg_plot  # noqa: E402
from report_lib import fmt, markdown_table, pooled, read_json, recall_study_parser, training_table, use_swarmt, write_outputs  # noqa: E402

SETS = {  # probe set -> what a reader sees
    "in_context": "two facts and their questions inside the first segment (50% for picking one of the two)",
    "one_fact": "one fact",
    "five_facts": "five facts, each asked among 4 others (in the order stated: the oldest unasked fact is always "
                  "the answer, so a memory that keeps the order needs no key)",
    "five_facts_shuffled": "five facts asked in a random order, each among 4 others (values may repeat and each "
                           "answer is shown after its question, so a model that knows the stated values but not "
                           "which key holds which is right more than 20% of the time: the key-blind floor below)",
    "five_facts_hidden": "five facts with distinct values, asked in a random order, the answers not shown (a model "
                         "that does not bind keys to values: 20%)",
    "rewrites": "five facts rewritten twice, the answer the latest value",
    "rewrites_shuffled": "five facts rewritten twice, the answer the latest value, asked in a random order",
}
MODELS = ["armt", "armt_seed2", "armt_noread", "armt_noread_seed2", "armt_gate", "armt_gate_seed2", "armt_sep",
          "armt_sep_seed2", "armt_linear", "armt_linear_seed2", "armt8_noread", "armt8_noread_seed2",
          "armt_wide_noread", "armt_wide_noread_seed2", "armt_lm", "armt_denom", "armt_denom_nogamma", "armt_probe",
          "armt_probe_seed2", "full_probe", "full_probe_rope", "armt_probe_rw", "full_probe_rw", "full_probe_rw_rope",
          "armt_hidden", "armt_hidden_seed2", "full_hidden", "full_hidden_rope", "armt_bind", "armt_bind_seed2",
          "full_bind", "full_bind_rope", "base_bind",
          "full8", "full8_rope", "base8", "full_wide", "full_wide_rope", "base_wide", "armt_swax", "full", "full_rope",
          "base", "base_recall", "swax_base"]
LABELS = {"armt": "ARMT (memory in all layers)", "armt_seed2": "ARMT, second seed (initialisation and data order)",
          "armt_noread": "ARMT, memory tokens that do not read the memory",
          "armt_noread_seed2": "ARMT, memory tokens that do not read, second seed",
          "armt_seeds_pooled": "ARMT, both seeds pooled",
          "armt_noread_seeds_pooled": "ARMT, memory tokens that do not read, both seeds pooled",
          "armt_gate": "ARMT, memory tokens that do not read, gated reads",
          "armt_gate_seed2": "ARMT, memory tokens that do not read, gated reads, second seed",
          "armt_gate_seeds_pooled": "ARMT, memory tokens that do not read, gated reads, both seeds pooled",
          "armt_sep": "ARMT, memory tokens that do not read, a separate write pass",
          "armt_sep_seed2": "ARMT, memory tokens that do not read, a separate write pass, second seed",
          "armt_sep_seeds_pooled": "ARMT, memory tokens that do not read, a separate write pass, both seeds pooled",
          "armt_linear": "ARMT, memory tokens that do not read, signed keys (linear features)",
          "armt_linear_seed2": "ARMT, memory tokens that do not read, signed keys, second seed",
          "armt_linear_seeds_pooled": "ARMT, memory tokens that do not read, signed keys, both seeds pooled",
          "armt_probe": "ARMT, memory tokens that do not read, trained on the probes' layout (questions in a random order)",
          "armt_probe_seed2": "ARMT trained on the probes' layout, second seed",
          "armt_probe_seeds_pooled": "ARMT trained on the probes' layout, both seeds pooled",
          "full_probe": "full attention trained on the probes' layout (the same data as the row above it)",
          "full_probe_rope": "full attention trained on the probes' layout + linear RoPE scaling",
          "armt_probe_rw": "ARMT trained on the probes' layout, then on rewrites",
          "full_probe_rw": "full attention trained on the probes' layout, then on rewrites (the same data)",
          "full_probe_rw_rope": "full attention trained on the probes' layout, then on rewrites + linear RoPE scaling",
          "armt_hidden": "ARMT trained with no key-blind answer (distinct values, answers not shown), after a binding stage",
          "armt_hidden_seed2": "ARMT trained with no key-blind answer, second seed",
          "armt_hidden_seeds_pooled": "ARMT trained with no key-blind answer, both seeds pooled",
          "full_hidden": "full attention trained on the same data as the row above (no key-blind answer)",
          "full_hidden_rope": "full attention trained with no key-blind answer + linear RoPE scaling",
          "base_bind": "a base pretrained on in-context recall from random initialisation (binds in its context)",
          "armt_bind": "ARMT over the base that binds in its context, trained with no key-blind answer",
          "armt_bind_seed2": "ARMT over the base that binds in its context, second seed",
          "armt_bind_seeds_pooled": "ARMT over the base that binds in its context, both seeds pooled",
          "full_bind": "full attention over the base that binds in its context, trained on the same data",
          "full_bind_rope": "full attention over the base that binds in its context + linear RoPE scaling",
          "armt8_noread": "ARMT over the 8-layer base, memory tokens that do not read",
          "armt8_noread_seed2": "ARMT over the 8-layer base, memory tokens that do not read, second seed",
          "armt8_noread_seeds_pooled": "ARMT over the 8-layer base, memory tokens that do not read, both seeds pooled",
          "armt_wide_noread": "ARMT over the base twice as wide (d 256), memory tokens that do not read",
          "armt_wide_noread_seed2": "ARMT over the base twice as wide, memory tokens that do not read, second seed",
          "armt_wide_noread_seeds_pooled":
              "ARMT over the base twice as wide, memory tokens that do not read, both seeds pooled",
          "armt_lm": "ARMT, memory tokens that do not read, after a continued language-model phase",
          "armt_denom": "ARMT, memory tokens that do not read, normalised rule with the gamma correction (s2, s4)",
          "armt_denom_nogamma": "ARMT, memory tokens that do not read, normalised rule without gamma (s2, s4)",
          "full8": "full attention over the 8-layer base, trained on the same data",
          "full8_rope": "full attention over the 8-layer base + linear RoPE scaling",
          "base8": "8-layer base (the language model the 8-layer arms wrap)",
          "full_wide": "full attention over the base twice as wide, trained on the same data",
          "full_wide_rope": "full attention over the base twice as wide + linear RoPE scaling",
          "base_wide": "base twice as wide (the language model the wide arms wrap)",
          "full": "full attention, trained on the same data",
          "full_rope": "full attention + linear RoPE scaling", "base": "base (the language model ARMT wraps)",
          "base_recall": "base fine-tuned on in-context recall",
          "armt_swax": "ARMT over a SWAX base of the same size (mLSTM + sliding-window attention)",
          "swax_base": "SWAX base (the language model that ARMT wraps in the row above)"}
STAGES = ["base", "base_recall", "armt", "armt_seed2", "armt_noread", "armt_noread_seed2", "armt_gate",
          "armt_gate_seed2", "armt_sep", "armt_sep_seed2", "armt_linear", "armt_linear_seed2", "base8",
          "armt8_noread", "armt8_noread_seed2", "base_wide", "armt_wide_noread", "armt_wide_noread_seed2", "armt_lm",
          "armt_denom", "armt_denom_nogamma", "armt_probe", "armt_probe_seed2", "swax_base", "armt_swax", "full_2", "full_4",
          "full_8", "full_probe_4", "full_probe_8", "full_probe_12", "armt_probe_rw", "full_probe_rw_20", "armt_hidden",
          "armt_hidden_seed2", "full_hidden_2", "full_hidden_4", "full_hidden_8", "full_hidden_12", "base_bind",
          "armt_bind", "armt_bind_seed2", "full_bind_4", "full_bind_8", "full_bind_12", "full8_2",
          "full8_4", "full8_8", "full_wide_2", "full_wide_4", "full_wide_8"]
# ARMT arms judged beside `armt` in the acceptance comparisons, and the seeds pooled into one cell.
OTHER_ARMS = ["armt_seed2", "armt_noread", "armt_noread_seed2", "armt_gate", "armt_gate_seed2", "armt_sep",
              "armt_sep_seed2", "armt_linear", "armt_linear_seed2", "armt8_noread", "armt8_noread_seed2",
              "armt_wide_noread", "armt_wide_noread_seed2", "armt_lm",
              "armt_denom", "armt_denom_nogamma", "armt_probe", "armt_probe_seed2", "armt_probe_rw", "armt_hidden",
              "armt_hidden_seed2", "armt_bind", "armt_bind_seed2", "armt_swax"]
SEED_POOLS = {"armt_seeds_pooled": ["armt", "armt_seed2"], "armt_noread_seeds_pooled": ["armt_noread", "armt_noread_seed2"],
              "armt_gate_seeds_pooled": ["armt_gate", "armt_gate_seed2"],
              "armt_sep_seeds_pooled": ["armt_sep", "armt_sep_seed2"],
              "armt_linear_seeds_pooled": ["armt_linear", "armt_linear_seed2"],
              "armt8_noread_seeds_pooled": ["armt8_noread", "armt8_noread_seed2"],
              "armt_wide_noread_seeds_pooled": ["armt_wide_noread", "armt_wide_noread_seed2"],
              "armt_probe_seeds_pooled": ["armt_probe", "armt_probe_seed2"],
              "armt_hidden_seeds_pooled": ["armt_hidden", "armt_hidden_seed2"],
              "armt_bind_seeds_pooled": ["armt_bind", "armt_bind_seed2"]}

# Arms with their own in-segment line (the Llama-based arms beside `armt`).
IN_SEGMENT_ARMS = ["armt_seed2", "armt_noread", "armt_noread_seed2", "armt_gate", "armt_gate_seed2", "armt_sep",
                   "armt_sep_seed2", "armt_linear", "armt_linear_seed2", "armt8_noread", "armt8_noread_seed2",
                   "armt_wide_noread", "armt_wide_noread_seed2",
                   "armt_lm", "armt_denom", "armt_denom_nogamma", "armt_probe", "armt_probe_seed2", "armt_hidden",
                   "armt_hidden_seed2", "armt_bind", "armt_bind_seed2"]


# The further bases of the script's BASES (--eight-layers, --wide-base): base<tag>, armt<tag>_noread, full<tag>.
FURTHER_BASES = ("8", "_wide")


def baselines_of(arm):
    """The fair baselines an ARMT arm is judged against: full attention over the same base on the same data, as
    trained and with RoPE scaling."""
    if arm.startswith("armt_probe_rw"):
        return "full_probe_rw", "full_probe_rw_rope"
    if arm.startswith("armt_probe"):
        return "full_probe", "full_probe_rope"
    if arm.startswith("armt_hidden"):
        return "full_hidden", "full_hidden_rope"
    if arm.startswith("armt_bind"):
        return "full_bind", "full_bind_rope"
    for tag in FURTHER_BASES:
        if arm.startswith(f"armt{tag}_"):
            return f"full{tag}", f"full{tag}_rope"
    return "full", "full_rope"


def collect_cells(work, sets=SETS):
    """model -> set -> distance -> {mean, ci95, count, successes, key_blind}, over every report of the work
    directory; key_blind: the accuracy of a model that knows the stated values but does not bind keys to them,
    on the same probes (`swarmt eval recall`'s key_blind_percent; absent in reports written before it)."""
    cells = {}
    root = os.path.join(work, "eval")
    for set_name in sets:
        for dirpath, _, files in os.walk(os.path.join(root, set_name)):
            if "summary.json" not in files:
                continue
            model = os.path.relpath(dirpath, os.path.join(root, set_name)).split(os.sep)[0]
            summary = read_json(os.path.join(dirpath, "summary.json"))
            floors = summary.get("metadata", {}).get("key_blind_percent", {})
            for row in summary["aggregates"]["by_length"]:
                cells.setdefault(model, {}).setdefault(set_name, {})[str(row["length"])] = {
                    "mean": row["mean"], "ci95": row.get("ci95"), "count": row["count"],
                    "successes": row.get("successes"), "key_blind": floors.get(str(row["length"]))}
    return cells


def key_blind_floors(cells, set_name):
    """distance -> the key-blind floor of a probe set (the same probes for every model, so one value per
    distance; the mean where reports differ in their samples)."""
    values = {}
    for model_cells in cells.values():
        for n, cell in model_cells.get(set_name, {}).items():
            if cell.get("key_blind") is not None:
                values.setdefault(n, []).append(cell["key_blind"])
    return {n: sum(v) / len(v) for n, v in values.items()}


def question_reports(work, set_name):
    """(model, every question of one report) for each `swarmt eval recall` results.json of a probe set."""
    root = os.path.join(work, "eval", set_name)
    for dirpath, _, files in os.walk(root):
        if "results.json" in files:
            yield os.path.relpath(dirpath, root).split(os.sep)[0], read_json(os.path.join(dirpath, "results.json"))["samples"]


def by_order(work, set_name="five_facts"):
    """model -> distance -> [accuracy of the facts in the order they were stated]: whether the memory
    retrieves by key or keeps the latest writes (read from every question of the reports' results.json)."""
    out = {}
    for model, samples in question_reports(work, set_name):
        tally = {}
        for sample in samples:
            counts = tally.setdefault(str(sample["length"]), {}).setdefault(sample["details"]["pair"], [0, 0])
            counts[0] += sample["score"] / 100.0
            counts[1] += 1
        for n, pairs in tally.items():
            out.setdefault(model, {})[n] = [round(100.0 * pairs[i][0] / pairs[i][1], 1) for i in sorted(pairs)]
    return out


def confusions(work, set_name="five_facts"):
    """model -> distance -> what the answers were: right, another of the probe's stated values (and how many
    facts after the asked one it was stated: +1 is the next fact), a value no fact of the probe stated, or
    not a value at all. Tells a memory that binds keys to the wrong values from one that loses them."""
    out = {}
    for model, samples in question_reports(work, set_name):
        alphabet = {s["details"]["value"] for s in samples}
        probes = {}
        for s in samples:
            probes.setdefault((s["length"], s["details"]["probe"]), []).append(s["details"])
        for (length, _), questions in probes.items():
            pair_of = {q["value"]: q["pair"] for q in questions}
            tally = out.setdefault(model, {}).setdefault(str(length), {
                "questions": 0, "right": 0, "other_stated": 0, "unstated_value": 0, "not_a_value": 0,
                "other_stated_by_offset": {}})
            for q in questions:
                tally["questions"] += 1
                guess = q["predicted"]
                if guess == q["value"]:
                    tally["right"] += 1
                elif guess in pair_of:
                    tally["other_stated"] += 1
                    offset = f"{pair_of[guess] - q['pair']:+d}"
                    tally["other_stated_by_offset"][offset] = tally["other_stated_by_offset"].get(offset, 0) + 1
                elif guess in alphabet:
                    tally["unstated_value"] += 1
                else:
                    tally["not_a_value"] += 1
    return out


def lookups(work):
    """`swarmt armt lookup` of each ARMT arm (WORK/eval/lookup/<model>.json): the answers and, per memory layer,
    the share of questions whose own fact's write matches the read best, with its Wilson interval."""
    out = {}
    folder = os.path.join(work, "eval", "lookup")
    for model in MODELS:
        path = os.path.join(folder, f"{model}.json")
        if not os.path.exists(path):
            continue
        r = read_json(path)
        layers = []
        for layer in r["layers"]:
            lookup = pooled([{"successes": layer["hits"], "count": layer["questions"]}])
            layers.append(dict(layer, lookup=lookup["mean"], lookup_ci95=lookup["ci95"]))
        answers = pooled([{"successes": r["answers_correct"], "count": r["questions"]}])
        out[model] = {"distance": r["distance"], "pairs": r["pairs"], "chance": 100.0 * r["lookup_chance"],
                      "answers": answers["mean"], "answers_ci95": answers["ci95"], "layers": layers}
    return out


def distance_label(n, T):
    return f"{n // T}T ({n})" if n % T == 0 else f"{n} (in-segment)"


def comparisons(cells, T):
    """The issue's questions, answered from the cells (absent where a cell is missing)."""
    def get(model, set_name, n):
        return cells.get(model, {}).get(set_name, {}).get(str(n))

    def disjoint_above(a, rivals):
        return a is not None and a["ci95"] is not None and all(
            r is not None and r["ci95"] is not None and a["ci95"][0] > r["ci95"][1] for r in rivals)

    def above_floor(cell, floor):  # the interval wholly above the key-blind floor (None: no floor recorded)
        return None if floor is None or cell["ci95"] is None else cell["ci95"][0] > floor

    out = {}
    for set_name in SETS:
        floors = key_blind_floors(cells, set_name)
        for n in (16, 32):
            # A row for every cell with an ARMT arm in it (a run of further arms alone has no `armt`). The
            # floor: that of armt's probes, else the set's (the study's probes share one seed, so one floor).
            a = get("armt", set_name, n * T)
            floor = a["key_blind"] if a and a.get("key_blind") is not None else floors.get(str(n * T))
            rivals = [get(m, set_name, n * T) for m in ("full", "full_rope")]
            row = {"key_blind": floor, "full": rivals[0] and rivals[0]["mean"],
                   "full_rope": rivals[1] and rivals[1]["mean"]}
            if a:
                row.update({"armt": a["mean"], "armt_ci95": a["ci95"],
                            "above_both_baselines_with_disjoint_intervals": disjoint_above(a, rivals),
                            "above_key_blind": above_floor(a, floor)})
            for baseline in (f"full{tag}{rope}" for tag in FURTHER_BASES + ("_probe", "_probe_rw", "_hidden", "_bind")
                             for rope in ("", "_rope")):
                cell = get(baseline, set_name, n * T)
                if cell:
                    row[baseline] = cell["mean"]
            arms = {other: get(other, set_name, n * T) for other in OTHER_ARMS}
            for pool, members in SEED_POOLS.items():
                cells_of_seeds = [get(m, set_name, n * T) for m in members]
                if all(c and c.get("successes") is not None for c in cells_of_seeds):
                    arms[pool] = pooled(cells_of_seeds)
            for other, second in arms.items():
                if second:
                    row.update({other: second["mean"], f"{other}_ci95": second["ci95"],
                                f"{other}_judged_against": list(baselines_of(other)),
                                f"{other}_above_both_baselines_with_disjoint_intervals":
                                    disjoint_above(second, [get(m, set_name, n * T) for m in baselines_of(other)]),
                                f"{other}_above_key_blind": above_floor(second, floor)})
            if a or any(arms.values()):
                out[f"{set_name}_{n}T"] = row
    a, base, recall = (get(m, "in_context", 4) for m in ("armt", "base", "base_recall"))
    if a and (base or recall):
        out["in_context"] = {"armt": a["mean"], "base": base and base["mean"], "base_recall": recall and recall["mean"],
                             "difference_to_base": base and a["mean"] - base["mean"],
                             "difference_to_base_recall": recall and a["mean"] - recall["mean"]}
    for other in IN_SEGMENT_ARMS:
        a = get(other, "in_context", 4)
        if a and recall:
            out[f"in_context_{other}"] = {other: a["mean"], "base_recall": recall["mean"],
                                          "difference_to_base_recall": a["mean"] - recall["mean"]}
    a, base = get("armt_swax", "in_context", 4), get("swax_base", "in_context", 4)
    if a and base:
        out["in_context_swax"] = {"armt_swax": a["mean"], "swax_base": base["mean"],
                                  "difference_to_base": a["mean"] - base["mean"]}
    return out


def main():
    a = recall_study_parser(__doc__).parse_args()
    use_swarmt(a.swarmt)
    T = a.segment
    os.makedirs(a.results, exist_ok=True)
    cells = collect_cells(a.work)
    stages = {s: stage_info(a.work, s) for s in STAGES if stage_info(a.work, s) is not None}
    command = "experiments/armt_retrieval.sh" + (" --quick" if a.mode == "quick" else "") + \
        (" --second-seed" if "armt_seed2" in stages else "") + (" --no-read" if "armt_noread" in stages else "") + \
        (" --read-gate" if "armt_gate" in stages else "") + (" --separate-write" if "armt_sep" in stages else "") + \
        (" --linear-keys" if "armt_linear" in stages else "") + \
        (" --probe-layout" if "armt_probe" in stages else "") + \
        (" --hidden-answers" if "armt_hidden" in stages else "") + \
        (" --bind-base" if "armt_bind" in stages else "") + \
        (" --eight-layers" if "armt8_noread" in stages else "") + \
        (" --wide-base" if "armt_wide_noread" in stages else "") + \
        (" --recipe" if "armt_lm" in stages else "") + (" --swax-base" if "armt_swax" in stages else "")
    results = {"experiment": "armt_retrieval", "mode": a.mode, "command": command, "wall_seconds": a.seconds,
               "segment_tokens": T, "cells": cells, "five_facts_by_order": by_order(a.work),
               "five_facts_answers": confusions(a.work), "training": stages,
               "comparisons": comparisons(cells, T), "memory_lookup": lookups(a.work)}
    md = [f"# ARMT: associative retrieval across segments ({a.mode} mode)", "",
          f"Command: `{command}` ({a.seconds // 60} min {a.seconds % 60} s on this run; stages already in the work "
          f"directory are reused and their own times are listed below). Segment T = {T} tokens. Task: token-level "
          "recall (a fact is \"key value\", a question repeats the key; 8 keys a-h, 8 values A-H, filler bytes "
          "128-255); accuracy of the argmax over the whole vocabulary (12.5% for a guess among the 8 values). "
          "Columns: how far the question is from the fact it asks about."]
    for set_name, title in SETS.items():
        present = [m for m in MODELS if set_name in cells.get(m, {})]
        if not present:
            continue
        distances = sorted({int(n) for m in present for n in cells[m][set_name]})
        md += ["", f"## Accuracy (%) [95% Wilson interval], {title}", ""]
        rows = [[LABELS[m]] + [cell_text(cells[m][set_name].get(str(n))) for n in distances] for m in present]
        md += markdown_table(["model"] + [distance_label(n, T) for n in distances], rows)
        counts = sorted({c["count"] for m in present for c in cells[m][set_name].values()})
        md += ["", f"Questions per cell: {', '.join(map(str, counts))}."]
        floors = key_blind_floors(cells, set_name)
        if floors:
            md += ["", "Key-blind floor (a model that knows the stated values and sees the answers already given, "
                   "but does not bind keys to values, answering the most frequent value left): " +
                   ", ".join(f"{fmt(floors[n])}% at {distance_label(int(n), T)}" for n in sorted(floors, key=int)) + "."]
        if len(distances) > 1:
            plot = f"{set_name}.svg"
            svg_plot(os.path.join(a.results, plot), f"Recall accuracy vs distance, {title.split(' (')[0]}",
                     {m: cells[m][set_name] for m in present}, T,
                     x_label=f"distance from the fact to its question (segments of T = {T} tokens)", labels=LABELS)
            md += ["", f"![{title}]({plot})"]
    order = results["five_facts_by_order"]
    if order:
        md += ["", "## Five facts: accuracy (%) by the order the facts were stated", "",
               "First fact stated ... last fact stated, one per segment; a memory that keeps only its latest "
               "writes scores high on the last ones and near 20% on the first."]
        rows = [[LABELS.get(m, m), distance_label(int(n), T)] + [fmt(x) for x in order[m][n]]
                for m in MODELS if m in order for n in sorted(order[m], key=int)]
        md += [""] + markdown_table(["model", "distance"] + [f"fact {i + 1}" for i in range(5)], rows)
    answers = results["five_facts_answers"]
    if answers:
        md += ["", "## Five facts: what the answers were", "",
               "Counts of questions. A wrong answer that is another stated value is a key bound to the wrong "
               "value; \"next fact\" counts those whose value was stated in the fact right after the asked one."]
        rows = [[LABELS.get(m, m), distance_label(int(n), T), c["questions"], c["right"], c["other_stated"],
                 c["other_stated_by_offset"].get("+1", 0), c["unstated_value"], c["not_a_value"]]
                for m in MODELS if m in answers for n in sorted(answers[m], key=int) for c in [answers[m][n]]]
        md += [""] + markdown_table(["model", "distance", "questions", "right", "another stated value",
                                     "of which the next fact's", "an unstated value", "not a value"], rows)
    lookup = results["memory_lookup"]
    if lookup:
        md += ["", "## What the memory reads (`swarmt armt lookup`)", "",
               "Five facts, one per segment, asked 8T later. Lookup: the share of questions whose own fact's write "
               "matches the question's read best in that memory layer (20% when the reads ignore the key); query "
               "cosine: between the reads of two different keys; key cosine: between the writes of two facts with "
               "the same key and with different keys (a write that carries its key has the first above the second)."]
        rows = []
        for m in MODELS:
            if m not in lookup:
                continue
            r = lookup[m]
            for layer in r["layers"]:
                rows.append([LABELS.get(m, m), f"{fmt(r['answers'])} [{fmt(r['answers_ci95'][0])}, "
                             f"{fmt(r['answers_ci95'][1])}]", layer["layer"],
                             f"{fmt(layer['lookup'])} [{fmt(layer['lookup_ci95'][0])}, {fmt(layer['lookup_ci95'][1])}]",
                             fmt(layer["query_cosine"], 3),
                             f"{fmt(layer['key_cosine_same'], 3)} / {fmt(layer['key_cosine_different'], 3)}"])
        md += [""] + markdown_table(["model", "answers (%)", "layer", "lookup (%)", "query cosine",
                                     "key cosine, same / other key"], rows)
    md += ["", "## The acceptance questions", "",
           "Each ARMT arm against the two fair baselines over its own base at 16T and 32T (full attention over the "
           "same base, trained on the same data, as trained and with RoPE scaling); \"pooled\" rows sum the "
           "questions of the two seeds of an arm into one cell with its Wilson interval."]
    rows = []
    for k, v in results["comparisons"].items():
        if k.startswith("in_context"):
            continue
        for arm in ["armt"] + OTHER_ARMS + list(SEED_POOLS):
            key = "" if arm == "armt" else f"{arm}_"
            if arm in v:
                ci = v.get(f"{arm}_ci95")
                full, full_rope = baselines_of(arm)
                rows.append([k, LABELS[arm],
                             fmt(v[arm]) + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""), fmt(v.get(full)),
                             fmt(v.get(full_rope)), v.get(f"{key}above_both_baselines_with_disjoint_intervals", "-"),
                             fmt(v.get("key_blind")), v.get(f"{key}above_key_blind", "-")])
    md += [""] + markdown_table(["cell", "model", "accuracy [95% interval]", "full attention", "full + RoPE scaling",
                                 "above both, intervals disjoint", "key-blind floor", "interval above it"], rows)
    inside = results["comparisons"].get("in_context")
    if inside:
        md += ["", f"Inside the first segment (two facts): ARMT {fmt(inside['armt'])}%, the base it wraps "
               f"{fmt(inside['base'])}%, the base fine-tuned on in-context recall {fmt(inside['base_recall'])}%."]
    for other in IN_SEGMENT_ARMS:
        inside = results["comparisons"].get(f"in_context_{other}")
        if inside:
            md += ["", f"Inside the first segment (two facts), {LABELS[other]}: {fmt(inside[other])}%."]
    inside = results["comparisons"].get("in_context_swax")
    if inside:
        md += ["", f"Over the SWAX base, inside the first segment: ARMT {fmt(inside['armt_swax'])}%, the SWAX base "
               f"{fmt(inside['swax_base'])}%."]
    md += ["", "## Training stages", ""]
    md += training_table(stages, "stage", "seconds", 4)
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
