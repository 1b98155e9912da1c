#!/usr/bin/env python3
"""record_pytorch.py: record one training iteration of a PyTorch model as the
pair of traces `swapsim import pytorch` takes: an execution trace (ET, the
tensors each operator reads and writes) and a Kineto trace (the GPU kernels
each operator launched, with their times).

    python3 tools/record_pytorch.py resnet50 --batch 64 -o out/resnet50_b64
    swapsim import pytorch out/resnet50_b64_et.json out/resnet50_b64_kineto.json \\
        --batch 64 -o resnet50.json
    swapsim run resnet50.json --planner swapadvisor --memory 0.5x

MODEL is a torchvision model name (resnet50, vgg16, inception_v3, ...), or
hf:NAME for a Hugging Face transformers model (a sequence-classification head
on NAME's configuration, randomly initialised: no download of weights), or
FILE.py:FUNC for your own model, where FUNC(batch, device) returns a dict with
"model" (a torch.nn.Module), "inputs" (a tuple of tensors, or one tensor),
"target" (a tensor, or None) and optionally "loss" (a function (output,
target) -> scalar tensor; default cross-entropy, or the model output's .loss)
and "optimizer" (default SGD with momentum 0.9).

From Python:

    import record_pytorch
    record_pytorch.record(model, inputs, target, out="out/mine", device="cuda")

Each module's forward runs inside a record_function scope named
"nn.Module: <qualified name>" (no tensors, no kernels), so the imported
profile names operators after the user's modules (layer3.2.conv1:aten::conv2d;
backward operators after their forward operator's module).

How the pair is recorded depends on the PyTorch version: where the profiler
takes an execution_trace_observer (PyTorch >= 2.1), the ET and the Kineto
trace come from one profiler session (their record function ids link them);
otherwise the ET comes from one iteration and the Kineto trace from the next,
and the importer matches them by their sequence of operators. Where PyTorch
was built without Kineto (Debian's python3-torch), only the ET is written,
and the profile has no times (its memory is right; its compute is zero:
`swapsim import pytorch --times model` fills them from the cost model).

The Kineto trace is recorded with profile_memory=True (the allocator's
events, from which the importer recovers memory no operator names, such as
cuDNN's convolution workspaces), and OUT_memory.json holds what the
recorded run measured on a GPU: torch.cuda.max_memory_allocated and
max_memory_reserved over one iteration, and its wall time.

Exit status: 0 on success, 1 on a usage error or a failure, with one line on
stderr saying what went wrong.
"""

import argparse
import contextlib
import gzip
import importlib.util
import json
import os
import shutil
import sys
import time

USAGE_ERROR = 1


def fail(msg):
    print("record_pytorch.py: " + msg, file=sys.stderr)
    sys.exit(USAGE_ERROR)


try:
    import torch
except ImportError:  # pragma: no cover - reported to the user
    torch = None


# ---- module records -------------------------------------------------------

MODULE_REC = "nn.Module: "


def _enter(name):
    ops = torch.ops.profiler
    if hasattr(ops, "_record_function_enter_new"):
        return ops._record_function_enter_new(name, None)
    rf = torch.autograd.profiler.record_function(name)
    rf.__enter__()
    return rf


def _exit(handle):
    if isinstance(handle, torch.autograd.profiler.record_function):
        handle.__exit__(None, None, None)
    else:
        torch.ops.profiler._record_function_exit._RecordFunction(handle)


def add_module_records(model):
    """Wrap every submodule's forward in a record_function scope named
    "nn.Module: <qualified name>"; returns the hook handles."""
    handles = []
    for name, mod in model.named_modules():
        if not name:
            continue
        stack = []

        def pre(_m, _inp, _name=name, _stack=stack):
            _stack.append(_enter(MODULE_REC + _name))

        def post(_m, _inp, _out, _stack=stack):
            if _stack:
                _exit(_stack.pop())

        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post))
    return handles


# ---- one iteration ----------------------------------------------------------

def _to(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (tuple, list)):
        return type(x)(_to(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, device) for k, v in x.items()}
    return x


def _default_loss(out, target):
    if hasattr(out, "loss") and out.loss is not None:
        return out.loss
    if hasattr(out, "logits"):
        out = out.logits
    if isinstance(out, (tuple, list)):
        out = out[0]
    if target is None:
        return out.float().sum()
    return torch.nn.functional.cross_entropy(out, target)


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def record(model, inputs, target=None, out="trace", device="cuda", precision="fp32",
           warmup=3, loss=None, optimizer=None, module_names=True, gzip_out=False, timed=5):
    """Record one training iteration of model on (inputs, target).

    Writes OUT_et.json and, where PyTorch has Kineto, OUT_kineto.json (with .gz
    when gzip_out); returns the list of files written. precision: fp32 (TF32
    off), tf32, or amp (autocast to float16 with a gradient scaler). On a GPU,
    timed synchronised iterations after the warm-up give OUT_memory.json's
    iteration time (their mean; each in iteration_s_each) and allocator peaks."""
    if torch is None:
        raise RuntimeError("PyTorch is not installed")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: no CUDA device is available (use --device cpu)")
    if precision not in ("fp32", "tf32", "amp"):
        raise ValueError("precision: expected fp32, tf32 or amp, got %r" % precision)
    if dev.type == "cuda":
        tf32 = precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    model = model.to(dev).train()
    inputs = _to(inputs if isinstance(inputs, (tuple, list)) else (inputs,), dev)
    target = _to(target, dev)
    loss = loss or _default_loss
    if optimizer is None:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    amp = precision == "amp"
    scaler = torch.cuda.amp.GradScaler() if amp and dev.type == "cuda" else None
    hooks = add_module_records(model) if module_names else []

    def step():
        optimizer.zero_grad(set_to_none=True)
        ctx = (torch.autocast(dev.type, dtype=torch.float16 if dev.type == "cuda"
                              else torch.bfloat16) if amp else contextlib.nullcontext())
        with ctx:
            l = loss(model(*inputs), target)
        if scaler:
            scaler.scale(l).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            l.backward()
            optimizer.step()

    for _ in range(warmup):
        step()
    _sync(dev)

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    et_path, k_path = out + "_et.json", out + "_kineto.json"
    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    kineto = torch.autograd.kineto_available()
    written = []
    ETO = getattr(torch.profiler, "ExecutionTraceObserver", None)
    import inspect
    one_session = (ETO is not None and kineto and "execution_trace_observer"
                   in inspect.signature(torch.profiler.profile).parameters)
    # what the recorded iteration measured: the allocator's peaks over it and
    # its wall time (OUT_memory.json; docs/pytorch-import.md)
    measured = {"device": str(dev), "torch": torch.__version__}
    if dev.type == "cuda":
        measured["memory_allocated_before"] = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        each = []
        for _ in range(max(1, timed)):
            t0 = time.perf_counter()
            step()
            _sync(dev)
            each.append(time.perf_counter() - t0)
        measured["iteration_s"] = sum(each) / len(each)
        measured["iteration_s_each"] = each
        measured["max_memory_allocated"] = torch.cuda.max_memory_allocated(dev)
        measured["max_memory_reserved"] = torch.cuda.max_memory_reserved(dev)
        measured["gpu"] = torch.cuda.get_device_name(dev)
    # profile_memory: the allocator's [memory] events, from which the importer
    # recovers memory no operator names (library workspaces)
    prof_kw = {"profile_memory": True}
    if one_session:
        eto = ETO().register_callback(et_path)
        with torch.profiler.profile(activities=acts, execution_trace_observer=eto,
                                    **prof_kw) as prof:
            step()
            _sync(dev)
        eto.unregister_callback()
        prof.export_chrome_trace(k_path)
        written = [et_path, k_path]
    else:
        obs = ETO() if ETO is not None else torch.profiler.ExecutionGraphObserver()
        obs.register_callback(et_path)
        obs.start()
        step()
        _sync(dev)
        obs.stop()
        obs.unregister_callback()
        written = [et_path]
        if kineto:
            with torch.profiler.profile(activities=acts, **prof_kw) as prof:
                step()
                _sync(dev)
            prof.export_chrome_trace(k_path)
            written.append(k_path)
    for h in hooks:
        h.remove()
    mem_path = out + "_memory.json"
    with open(mem_path, "w") as f:
        json.dump(measured, f, indent=1)
        f.write("\n")
    if gzip_out:
        gz = []
        for p in written:
            with open(p, "rb") as src, gzip.open(p + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(p)
            gz.append(p + ".gz")
        written = gz
    return written + [mem_path]


# ---- models by name -------------------------------------------------------

def _torchvision(name, batch, image_size):
    try:
        import torchvision
    except ImportError:
        fail("model '%s': torchvision is not installed (pip install torchvision, or "
             "apt-get install python3-torchvision)" % name)
    fn = getattr(torchvision.models, name, None)
    if fn is None or not callable(fn) or name.startswith("_"):
        known = sorted(n for n in dir(torchvision.models)
                       if n[:1].islower() and callable(getattr(torchvision.models, n))
                       and not n.startswith("get_"))
        fail("model '%s': not a torchvision model (expected one of %s, hf:NAME or "
             "FILE.py:FUNC)" % (name, ", ".join(known[:40]) + (", ..." if len(known) > 40 else "")))
    kw = {"num_classes": 1000}
    if name.startswith("inception"):
        kw["aux_logits"] = False
        kw["init_weights"] = False
        image_size = image_size or 299
    if name.startswith("googlenet"):
        kw["aux_logits"] = False
        kw["init_weights"] = False
    size = image_size or 224
    model = fn(**kw)
    return {"model": model, "inputs": (torch.randn(batch, 3, size, size),),
            "target": torch.randint(0, 1000, (batch,))}


def _huggingface(name, batch, seq_len):
    try:
        import transformers
    except ImportError:
        fail("model 'hf:%s': transformers is not installed (pip install transformers)" % name)
    try:
        cfg = transformers.AutoConfig.from_pretrained(name)
    except Exception as e:  # noqa: BLE001 - any failure is reported in one line
        fail("model 'hf:%s': cannot load its configuration (%s)" % (name, str(e).splitlines()[0]))
    cfg.num_labels = 2
    model = transformers.AutoModelForSequenceClassification.from_config(cfg)
    seq = seq_len or min(128, getattr(cfg, "max_position_embeddings", 128))
    ids = torch.randint(0, cfg.vocab_size, (batch, seq))
    return {"model": model, "inputs": (ids,), "target": torch.randint(0, 2, (batch,)),
            "loss": lambda out, tgt: torch.nn.functional.cross_entropy(out.logits, tgt)}


def _from_file(spec, batch, device):
    path, _, func = spec.rpartition(":")
    if not os.path.isfile(path):
        fail("model '%s': %s is not a file (expected FILE.py:FUNC)" % (spec, path))
    mspec = importlib.util.spec_from_file_location("user_model", path)
    mod = importlib.util.module_from_spec(mspec)
    try:
        mspec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail("model '%s': %s failed to load: %s" % (spec, path, e))
    fn = getattr(mod, func, None)
    if not callable(fn):
        fail("model '%s': %s defines no function %s" % (spec, path, func))
    got = fn(batch, device)
    if not isinstance(got, dict) or "model" not in got or "inputs" not in got:
        fail("model '%s': %s(batch, device) must return a dict with \"model\" and \"inputs\""
             % (spec, func))
    return got


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="record_pytorch.py",
        description="Record one training iteration of a PyTorch model as an execution trace "
                    "and a Kineto trace for `swapsim import pytorch`.")
    ap.add_argument("model", help="torchvision name (resnet50), hf:NAME, or FILE.py:FUNC")
    ap.add_argument("--batch", type=int, default=32, help="samples per iteration (default 32)")
    ap.add_argument("--device", default=None,
                    help="cuda, cuda:N or cpu (default: cuda if available, else cpu)")
    ap.add_argument("--precision", choices=("fp32", "tf32", "amp"), default="fp32",
                    help="fp32 with TF32 off (default), tf32, or amp (autocast fp16 + grad scaler)")
    ap.add_argument("--warmup", type=int, default=3, help="iterations before the recorded one")
    ap.add_argument("--timed", type=int, default=5,
                    help="GPU: synchronised iterations timed after the warm-up; their mean is "
                         "OUT_memory.json's iteration_s (default 5)")
    ap.add_argument("--image-size", type=int, default=0,
                    help="torchvision models: input height and width (default 224; 299 for "
                         "inception)")
    ap.add_argument("--seq-len", type=int, default=0, help="hf: models: tokens per sample")
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd",
                    help="sgd (momentum 0.9, default) or adam")
    ap.add_argument("--no-module-names", action="store_true",
                    help="do not add the nn.Module records (operators are then named by ET id)")
    ap.add_argument("--gzip", action="store_true", help="write .json.gz")
    ap.add_argument("-o", "--out", required=True,
                    help="output prefix: writes PREFIX_et.json and PREFIX_kineto.json")
    a = ap.parse_args(argv)
    if torch is None:
        fail("PyTorch is not installed for %s (pip install torch, or apt-get install "
             "python3-torch)" % sys.executable)
    if a.batch < 1:
        fail("--batch: expected a positive integer, got %d" % a.batch)
    if a.warmup < 0:
        fail("--warmup: expected an integer >= 0, got %d" % a.warmup)
    if a.timed < 1:
        fail("--timed: expected a positive integer, got %d" % a.timed)
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        torch.device(device)
    except RuntimeError:
        fail("--device: expected cuda, cuda:N or cpu, got '%s'" % device)
    if a.model.startswith("hf:"):
        spec = _huggingface(a.model[3:], a.batch, a.seq_len)
    elif ".py:" in a.model:
        spec = _from_file(a.model, a.batch, device)
    else:
        spec = _torchvision(a.model, a.batch, a.image_size)
    model = spec["model"]
    opt = spec.get("optimizer")
    if opt is None and a.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    try:
        files = record(model, spec["inputs"], spec.get("target"), out=a.out, device=device,
                       precision=a.precision, warmup=a.warmup, loss=spec.get("loss"),
                       optimizer=opt, module_names=not a.no_module_names, gzip_out=a.gzip,
                       timed=a.timed)
    except (RuntimeError, ValueError) as e:
        fail(str(e).splitlines()[0])
    for f in files:
        print("wrote " + f)
    if len(files) == 1:
        print("note: this PyTorch has no Kineto profiler: the profile will have no times")
    print("next: swapsim import pytorch %s --batch %d -o %s.json" % (" ".join(files), a.batch,
                                                                    a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
