#!/usr/bin/env python3
"""zoo.py: the models recorded for data/pytorch-traces/ that are not plain
torchvision names, as FILE.py:FUNC entries for record_pytorch.py, and a driver
that records several models in one process.

    python3 tools/record_pytorch.py tools/zoo.py:lstm_lm --batch 64 -o out/lstm
    python3 tools/zoo.py --out out/rec --tag h200 lstm_lm resnet50 vit_b_16 ...

A NAME is a function of this file (lstm_lm, gru_lm, unet, llama_small, gpt2,
bert_base) or a torchvision model name (resnet50, vgg16, vit_b_16,
mobilenet_v3_large, ...). The driver writes, per model, TAG_NAME_bB[_sS]_et.json.gz,
_kineto.json.gz and _memory.json under --out (record_pytorch.record, fp32 with
TF32 off, SGD with momentum 0.9, 3 warm-up and 5 timed iterations), and
manifest.json: the command, batch, sequence length, seconds and error of each.
One model's failure is reported there and the others still run.

The models, plain PyTorch unless named otherwise:
- lstm_lm, gru_lm: embedding 10000x1024, a 2-layer nn.LSTM / nn.GRU of 1024
  (cuDNN on a GPU), linear to 10000; sequence 128 (the H100 LSTM's model).
- unet: a 4-level U-Net (64..512 channels, two 3x3 conv + batch norm + ReLU per
  block, max-pool down, transposed convolution up, skip concatenation), 21
  classes, 256x256 inputs, per-pixel cross-entropy.
- llama_small: a Llama-style decoder (RMSNorm, SwiGLU, rotary embeddings,
  grouped-query attention through scaled_dot_product_attention), 12 layers,
  hidden 768, 12 query and 4 key/value heads, MLP 2048, vocabulary 32000,
  untied output layer; sequence 1024; next-token cross-entropy.
- gpt2, bert_base: Hugging Face transformers' GPT2LMHeadModel and
  BertForSequenceClassification from their default configurations (GPT-2 small,
  BERT-base; randomly initialised, nothing downloaded); sequence 1024 and 128.

Exit status: 0 when every model was recorded, 1 otherwise.
"""

import argparse
import gc
import json
import os
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - reported by record_pytorch
    torch = None
    nn = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _seq_loss(out, target):
    logits = out.logits if hasattr(out, "logits") else out
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1))


# ---- recurrent language models ---------------------------------------------

if nn is not None:
    class RNNLM(nn.Module):
        def __init__(self, cell, vocab=10000, hidden=1024, layers=2):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.rnn = getattr(nn, cell)(hidden, hidden, layers, batch_first=True)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, x):
            h, _ = self.rnn(self.emb(x))
            return self.out(h)


def _rnn_lm(cell, batch, seq=128, vocab=10000):
    ids = torch.randint(0, vocab, (batch, seq))
    return {"model": RNNLM(cell, vocab), "inputs": (ids,),
            "target": torch.randint(0, vocab, (batch, seq)), "loss": _seq_loss, "seq": seq}


def lstm_lm(batch, device=None):
    return _rnn_lm("LSTM", batch)


def gru_lm(batch, device=None):
    return _rnn_lm("GRU", batch)


# ---- U-Net ------------------------------------------------------------------

if nn is not None:
    def _block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self, cin=3, classes=21, widths=(64, 128, 256, 512, 1024)):
            super().__init__()
            self.down = nn.ModuleList()
            c = cin
            for w in widths:
                self.down.append(_block(c, w))
                c = w
            self.up = nn.ModuleList()
            self.merge = nn.ModuleList()
            for w in reversed(widths[:-1]):
                self.up.append(nn.ConvTranspose2d(c, w, 2, stride=2))
                self.merge.append(_block(2 * w, w))
                c = w
            self.head = nn.Conv2d(c, classes, 1)

        def forward(self, x):
            skips = []
            for i, blk in enumerate(self.down):
                x = blk(x)
                if i + 1 < len(self.down):
                    skips.append(x)
                    x = F.max_pool2d(x, 2)
            for up, merge in zip(self.up, self.merge):
                x = merge(torch.cat([up(x), skips.pop()], dim=1))
            return self.head(x)


def unet(batch, device=None, size=256, classes=21):
    return {"model": UNet(classes=classes), "inputs": (torch.randn(batch, 3, size, size),),
            "target": torch.randint(0, classes, (batch, size, size))}


# ---- a Llama-style decoder ------------------------------------------------------

if nn is not None:
    class RMSNorm(nn.Module):
        def __init__(self, d, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def _rotate(x, cos, sin):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class DecoderLayer(nn.Module):
        def __init__(self, d, heads, kv_heads, mlp):
            super().__init__()
            self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
            self.attn_norm = RMSNorm(d)
            self.q = nn.Linear(d, heads * self.hd, bias=False)
            self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
            self.o = nn.Linear(heads * self.hd, d, bias=False)
            self.mlp_norm = RMSNorm(d)
            self.gate = nn.Linear(d, mlp, bias=False)
            self.upp = nn.Linear(d, mlp, bias=False)
            self.down = nn.Linear(mlp, d, bias=False)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            h = self.attn_norm(x)
            q = self.q(h).view(b, s, self.heads, self.hd).transpose(1, 2)
            k = self.k(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
            v = self.v(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
            q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
            h = self.mlp_norm(x)
            return x + self.down(F.silu(self.gate(h)) * self.upp(h))

    class LlamaStyle(nn.Module):
        def __init__(self, vocab=32000, d=768, layers=12, heads=12, kv_heads=4, mlp=2048,
                     max_seq=4096):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.layers = nn.ModuleList(DecoderLayer(d, heads, kv_heads, mlp)
                                        for _ in range(layers))
            self.norm = RMSNorm(d)
            self.out = nn.Linear(d, vocab, bias=False)
            hd = d // heads
            inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
            ang = torch.outer(torch.arange(max_seq).float(), inv)
            ang = torch.cat((ang, ang), dim=-1)
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)

        def forward(self, ids):
            s = ids.shape[1]
            x = self.emb(ids)
            cos, sin = self.cos[:s], self.sin[:s]
            for layer in self.layers:
                x = layer(x, cos, sin)
            return self.out(self.norm(x))


def llama_small(batch, device=None, seq=1024, vocab=32000):
    ids = torch.randint(0, vocab, (batch, seq + 1))
    return {"model": LlamaStyle(vocab=vocab), "inputs": (ids[:, :-1].contiguous(),),
            "target": ids[:, 1:].contiguous(), "loss": _seq_loss, "seq": seq}


# ---- Hugging Face transformers ------------------------------------------------

if nn is not None:
    class LogitsOnly(nn.Module):
        """A transformers model called with input ids alone, returning logits."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, ids):
            return self.inner(input_ids=ids).logits


def gpt2(batch, device=None, seq=1024):
    import transformers
    cfg = transformers.GPT2Config()
    cfg.use_cache = False
    model = LogitsOnly(transformers.GPT2LMHeadModel(cfg))
    ids = torch.randint(0, cfg.vocab_size, (batch, seq + 1))
    return {"model": model, "inputs": (ids[:, :-1].contiguous(),),
            "target": ids[:, 1:].contiguous(), "loss": _seq_loss, "seq": seq}


def bert_base(batch, device=None, seq=128):
    import transformers
    cfg = transformers.BertConfig()
    cfg.num_labels = 2
    model = LogitsOnly(transformers.BertForSequenceClassification(cfg))
    ids = torch.randint(0, cfg.vocab_size, (batch, seq))
    return {"model": model, "inputs": (ids,), "target": torch.randint(0, 2, (batch,)),
            "loss": lambda out, tgt: F.cross_entropy(out, tgt), "seq": seq}


ZOO = {"lstm_lm": lstm_lm, "gru_lm": gru_lm, "unet": unet, "llama_small": llama_small,
       "gpt2": gpt2, "bert_base": bert_base}


# ---- the driver ------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(prog="zoo.py", description="Record several models' traces "
                                 "(record_pytorch.record) in one process.")
    ap.add_argument("models", nargs="+", help="NAME or NAME:BATCH (zoo functions or "
                    "torchvision names)")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--tag", default="gpu", help="file name prefix, e.g. the GPU (h200)")
    ap.add_argument("--batch", type=int, default=64, help="default batch (default 64)")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args(argv)
    if torch is None:
        print("zoo.py: PyTorch is not installed for %s" % sys.executable, file=sys.stderr)
        return 1
    sys.path.insert(0, HERE)
    import record_pytorch as rp
    os.makedirs(a.out, exist_ok=True)
    manifest = []
    ok = True
    for spec in a.models:
        name, _, b = spec.partition(":")
        batch = int(b) if b else a.batch
        entry = {"model": name, "batch": batch, "device": a.device, "torch": torch.__version__}
        t0 = time.time()
        try:
            torch.manual_seed(0)
            got = ZOO[name](batch, a.device) if name in ZOO else rp._torchvision(name, batch, 0)
            seq = got.get("seq")
            stem = "%s_%s_b%d%s" % (a.tag, name, batch, "s%d" % seq if seq else "")
            entry["seq"] = seq
            entry["prefix"] = stem
            entry["command"] = ("python3 tools/zoo.py --out DIR --tag %s %s:%d" %
                                (a.tag, name, batch))
            files = rp.record(got["model"], got["inputs"], got.get("target"),
                              out=os.path.join(a.out, stem), device=a.device,
                              loss=got.get("loss"), gzip_out=True)
            entry["files"] = [os.path.basename(f) for f in files]
            with open(os.path.join(a.out, stem + "_memory.json")) as f:
                entry["measured"] = json.load(f)
        except Exception as e:  # noqa: BLE001 - one line per failed model
            ok = False
            entry["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            print("zoo.py: %s: %s" % (name, entry["error"]), file=sys.stderr)
        entry["seconds"] = round(time.time() - t0, 2)
        manifest.append(entry)
        got = None
        gc.collect()
        if a.device.startswith("cuda") and torch.cuda.is_available():
            torch.cuda.empty_cache()
        m = entry.get("measured", {})
        print("%-20s %6.1f s  iteration %s  peak %s" % (
            name, entry["seconds"],
            "%.2f ms" % (1e3 * m["iteration_s"]) if "iteration_s" in m else "-",
            "%.3f GiB" % (m["max_memory_allocated"] / 2**30) if "max_memory_allocated" in m
            else entry.get("error", "-")), flush=True)
        with open(os.path.join(a.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
