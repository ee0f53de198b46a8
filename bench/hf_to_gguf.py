#!/usr/bin/env python3
"""Writes a swarmt / Hugging Face Llama model directory as a GGUF file for llama.cpp, without numpy.

A yardstick tool for bench/decode_vs_llama_cpp.sh: llama.cpp runs the very weights swarmt runs, so the
two engines are timed on the same model. Only what that comparison needs is converted:

  - architecture "llama" (config.json model_type "llama"); one model.safetensors file;
  - tensors stored as F32 or BF16, written as F32 or BF16 (--outtype); BF16 → F32 widens exactly, the
    other way is refused (it would need rounding, which swarmt does: `swarmt model init --dtype bfloat16`);
  - 1-D tensors (the RMSNorm weights) always as F32, as llama.cpp's own converter writes them;
  - no tokenizer: "tokenizer.ggml.model" = "none" with the vocabulary size, so llama.cpp takes token ids.

GGUF layout (llama.cpp gguf-py, version 3): magic "GGUF", version, tensor count, metadata count; the
metadata key/value pairs; one info per tensor (name, dims innermost first, type, data offset); then the
tensor data, each tensor aligned to 32 bytes.

llama.cpp's "llama" architecture applies RoPE to interleaved pairs (x0, x1), (x2, x3), ...; Hugging Face
rotates halves (x_i, x_{i+D/2}). As llama.cpp's converter does, the rows of q_proj and k_proj are
permuted within each head so that both compute the same attention: new row 2j + t is old row t·D/2 + j.

Usage: hf_to_gguf.py MODEL_DIR OUT.gguf [--outtype f32|bf16]
"""
import argparse
import json
import os
import struct
import sys

ALIGNMENT = 32
GGML_F32, GGML_BF16 = 0, 30
FILE_TYPE = {"f32": 0, "bf16": 32}  # llama_ftype: ALL_F32, MOSTLY_BF16
VALUE_UINT32, VALUE_FLOAT32, VALUE_STRING = 4, 6, 8


def fail(message):
    print(f"hf_to_gguf: {message}", file=sys.stderr)
    sys.exit(2)


def read_safetensors(path):
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
        data_start = 8 + header_len
    header.pop("__metadata__", None)
    return header, data_start


def gguf_string(text):
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def kv(key, value_type, value):
    out = gguf_string(key) + struct.pack("<I", value_type)
    if value_type == VALUE_UINT32:
        return out + struct.pack("<I", value)
    if value_type == VALUE_FLOAT32:
        return out + struct.pack("<f", value)
    return out + gguf_string(value)


def gguf_name(hf_name):
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    if hf_name in names:
        return names[hf_name]
    parts = hf_name.split(".")
    if len(parts) < 5 or parts[0] != "model" or parts[1] != "layers":
        fail(f"tensor '{hf_name}' has no GGUF name (only Llama checkpoints are converted)")
    layer, rest = parts[2], ".".join(parts[3:])
    per_layer = {
        "input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.o_proj.weight": "attn_output.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight"}
    if rest not in per_layer:
        fail(f"tensor '{hf_name}' has no GGUF name (biases and other extras are not converted)")
    return f"blk.{layer}.{per_layer[rest]}"


def bf16_to_f32(raw):
    """Exact widening: each little-endian bf16 becomes the upper half of an f32."""
    out = bytearray(2 * len(raw))
    out[2::4] = raw[0::2]
    out[3::4] = raw[1::2]
    return bytes(out)


def permute_rows(raw, rows, heads):
    """Hugging Face's rotate-half rows → llama.cpp's interleaved rows, within each head."""
    row_bytes = len(raw) // rows
    head_dim = rows // heads
    half = head_dim // 2
    out = bytearray(len(raw))
    for h in range(heads):
        for j in range(half):
            for t in range(2):
                src = (h * head_dim + t * half + j) * row_bytes
                dst = (h * head_dim + 2 * j + t) * row_bytes
                out[dst:dst + row_bytes] = raw[src:src + row_bytes]
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("out")
    parser.add_argument("--outtype", choices=["f32", "bf16"], default="bf16")
    args = parser.parse_args()

    config_path = os.path.join(args.model_dir, "config.json")
    weights_path = os.path.join(args.model_dir, "model.safetensors")
    for path in (config_path, weights_path):
        if not os.path.isfile(path):
            fail(f"{path}: not found")
    with open(config_path) as f:
        config = json.load(f)
    if config.get("model_type") != "llama":
        fail(f"{config_path}: field 'model_type' is {config.get('model_type')!r}; only 'llama' is converted")
    try:
        hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
        kv_heads = int(config.get("num_key_value_heads", heads))
        head_dim = int(config.get("head_dim") or hidden // heads)
        meta = [
            kv("general.architecture", VALUE_STRING, "llama"),
            kv("general.name", VALUE_STRING, "swarmt-bench"),
            kv("general.file_type", VALUE_UINT32, FILE_TYPE[args.outtype]),
            kv("llama.context_length", VALUE_UINT32, int(config.get("max_position_embeddings", 2048))),
            kv("llama.embedding_length", VALUE_UINT32, hidden),
            kv("llama.block_count", VALUE_UINT32, int(config["num_hidden_layers"])),
            kv("llama.feed_forward_length", VALUE_UINT32, int(config["intermediate_size"])),
            kv("llama.attention.head_count", VALUE_UINT32, heads),
            kv("llama.attention.head_count_kv", VALUE_UINT32, kv_heads),
            kv("llama.attention.key_length", VALUE_UINT32, head_dim),
            kv("llama.attention.value_length", VALUE_UINT32, head_dim),
            kv("llama.rope.dimension_count", VALUE_UINT32, head_dim),
            kv("llama.rope.freq_base", VALUE_FLOAT32, float(config.get("rope_theta", 10000.0))),
            kv("llama.attention.layer_norm_rms_epsilon", VALUE_FLOAT32, float(config.get("rms_norm_eps", 1e-6))),
            kv("llama.vocab_size", VALUE_UINT32, int(config["vocab_size"])),
            kv("tokenizer.ggml.model", VALUE_STRING, "none"),
        ]
    except (KeyError, TypeError, ValueError) as e:
        fail(f"{config_path}: missing or malformed field {e}")
    if config.get("rope_scaling"):
        fail(f"{config_path}: field 'rope_scaling' is set; not converted")
    if config.get("attention_bias") or config.get("mlp_bias"):
        fail(f"{config_path}: biases are not converted")

    header, data_start = read_safetensors(weights_path)
    out_type = GGML_BF16 if args.outtype == "bf16" else GGML_F32
    tensors = []  # (gguf name, dims innermost first, ggml type, bytes)
    with open(weights_path, "rb") as f:
        for name, info in header.items():
            dtype, shape = info["dtype"], info["shape"]
            if dtype not in ("F32", "BF16"):
                fail(f"{weights_path}: tensor '{name}' is {dtype}; only F32 and BF16 are converted")
            begin, end = info["data_offsets"]
            f.seek(data_start + begin)
            raw = f.read(end - begin)
            target = GGML_F32 if len(shape) == 1 else out_type
            if dtype == "BF16" and target == GGML_F32:
                raw = bf16_to_f32(raw)
            elif dtype == "F32" and target == GGML_BF16:
                fail(f"{weights_path}: tensor '{name}' is F32; store the model in bf16 first "
                     "(swarmt model init --dtype bfloat16) or convert with --outtype f32")
            if name.endswith("self_attn.q_proj.weight"):
                raw = permute_rows(raw, shape[0], heads)
            elif name.endswith("self_attn.k_proj.weight"):
                raw = permute_rows(raw, shape[0], kv_heads)
            tensors.append((gguf_name(name), list(reversed(shape)), target, raw))

    infos, offset = [], 0
    for name, dims, ggml_type, raw in tensors:
        infos.append(gguf_string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
                     + struct.pack("<IQ", ggml_type, offset))
        offset += (len(raw) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta) + b"".join(infos)
    tmp = args.out + ".partial"
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(b"\0" * ((-len(head)) % ALIGNMENT))
        for _, _, _, raw in tensors:
            f.write(raw)
            f.write(b"\0" * ((-len(raw)) % ALIGNMENT))
    os.replace(tmp, args.out)
    print(f"{args.out}: {len(tensors)} tensors, {args.outtype}")


if __name__ == "__main__":
    main()
