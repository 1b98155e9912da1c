#!/usr/bin/env python3
"""apply_plan.py: run a swapsim plan in PyTorch. `swapsim export PLAN --format
pytorch -o policy.json` turns a plan of a profile recorded with
tools/record_pytorch.py into a policy: per saved activation (a tensor the
forward pass saves for the backward pass), keep it, offload it to host memory
and fetch it back after a named module's backward, or recompute it in a
checkpointed module region. This module applies that policy to the model:

    import apply_plan
    policy = apply_plan.load_policy("policy.json")
    applied = apply_plan.apply(model, policy)
    with applied:                 # forward (and backward) inside
        loss = loss_fn(model(x), y)
        loss.backward()
    print(applied.stats())        # decisions applied, bytes held and moved
    applied.remove()              # the model as it was

Offloads go through torch.autograd.graph.saved_tensors_hooks: on a GPU to
pinned host memory on a side stream, fetched back on that stream after the
backward of the module the policy names (before the operator that needs it);
on the CPU to a separate buffer (a copy, counted the same way). Recomputed
regions are modules wrapped in non-reentrant torch.utils.checkpoint.

From the command line (MODEL as for record_pytorch.py):

    python3 tools/apply_plan.py MODEL --policy policy.json --check --json
    python3 tools/apply_plan.py MODEL --policy policy.json --measure 10 --csv runs.csv

--check runs one training step with and without the policy and compares the
loss and every gradient; --measure N runs N iterations each way and reports
the iteration time, the memory (max_memory_allocated / max_memory_reserved on
a GPU; the bytes the hooks hold on the CPU) and the bytes moved, beside the
simulator's figures for the plan (from the policy), with a CSV row per run in
the columns experiments/fig11.sh writes. docs/apply.md says what maps.

Exit status: 0 on success (and, with --check, equal gradients), 1 otherwise,
with one line on stderr saying what went wrong.
"""

import argparse
import copy
import functools
import json
import os
import sys
import time
import weakref

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_pytorch  # noqa: E402  (models by name, the same as the recorder's)

torch = record_pytorch.torch
if torch is not None:
    import torch.utils.checkpoint  # noqa: E402

KEEP, OFFLOAD, RECOMPUTE = "keep", "offload", "recompute"


def fail(msg):
    print("apply_plan.py: " + msg, file=sys.stderr)
    sys.exit(1)


def load_policy(path):
    """Read a policy written by `swapsim export --format pytorch`; raises
    ValueError with one line naming the file and what was expected."""
    try:
        with open(path) as f:
            pol = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError("%s: cannot read the policy (%s)" % (path, str(e).splitlines()[0]))
    if not isinstance(pol, dict) or pol.get("format") != "swapsim-pytorch-policy":
        raise ValueError("%s: expected a policy from `swapsim export --format pytorch` "
                         "(\"format\": \"swapsim-pytorch-policy\")" % path)
    if pol.get("version") != 1:
        raise ValueError("%s: at $.version: expected 1, got %r" % (path, pol.get("version")))
    for i, t in enumerate(pol.get("tensors", [])):
        if t.get("decision") not in (KEEP, OFFLOAD, RECOMPUTE):
            raise ValueError("%s: at $.tensors[%d].decision: expected keep, offload or "
                             "recompute, got %r" % (path, i, t.get("decision")))
    return pol


# ---- storages -----------------------------------------------------------------

def _storage(t):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s


def _storage_key(t):
    return _storage(t).data_ptr()


def _storage_bytes(t):
    return _storage(t).nbytes()


def _flat(t):
    """The whole storage of t as a 1-d tensor of t's dtype (no copy)."""
    n = _storage_bytes(t) // t.element_size()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(_storage(t), 0, (n,), (1,))


class _Record:
    """One saved storage: its decision, taken once, and where it is."""
    __slots__ = ("key", "rep", "entry", "decision", "bytes", "packs", "pending", "dev", "host",
                 "event", "prefetch_after")

    def __init__(self, key, rep, entry, decision, nbytes):
        self.key, self.rep, self.entry, self.decision = key, rep, entry, decision
        self.bytes, self.packs, self.pending = nbytes, 0, 0
        self.dev = self.host = self.event = None
        self.prefetch_after = entry.get("prefetch_after", "") if entry else ""


class Applied:
    """A model with a policy applied (apply() makes one). Enter it around the
    forward pass (and the backward, as you like) of each training step."""

    def __init__(self, model, policy):
        self.model, self.policy = model, policy
        self.entries = list(policy.get("tensors", []))
        self.regions = list(policy.get("regions", []))
        self.cuda = next((p.is_cuda for p in model.parameters()), False)
        self.side = torch.cuda.Stream() if self.cuda else None
        self.handles, self.wrapped = [], []
        self.prefetch_modules = {e.get("prefetch_after", "") for e in self.entries
                                 if e["decision"] == OFFLOAD}
        self._install()
        self._reset()

    # -- installation ---------------------------------------------------------
    def _install(self):
        for name, mod in self.model.named_modules():
            if not name:
                continue
            self.handles.append(mod.register_forward_pre_hook(
                functools.partial(self._pre, name)))
            self.handles.append(mod.register_forward_hook(functools.partial(self._post, name)))
        for r in self.regions:
            try:
                mod = self.model.get_submodule(r)
            except AttributeError:
                raise ValueError("policy region '%s': the model has no such module" % r)
            orig = mod.forward

            def ckpt(*args, _orig=orig, **kw):
                return torch.utils.checkpoint.checkpoint(_orig, *args, use_reentrant=False, **kw)
            mod.forward = ckpt
            self.wrapped.append((mod, orig))

    def remove(self):
        """Take the hooks and the checkpoint wrappers off the model."""
        for h in self.handles:
            h.remove()
        for mod, orig in self.wrapped:
            mod.forward = orig
        self.handles, self.wrapped = [], []

    # -- per iteration -------------------------------------------------------
    def _reset(self):
        self.by_key = {}
        for i, e in enumerate(self.entries):
            if e["decision"] != RECOMPUTE:
                self.by_key.setdefault((e.get("scope", ""), e["bytes"]), []).append(i)
        self.matched = [0] * len(self.entries)
        self.records, self.tags, self.stack = {}, {}, []
        self.in_forward = False
        self.bwd_started = False
        self.held, self.held_peak, self.held_start = 0, 0, None
        self.held_trace = []
        self.steps = []  # (policy entry, bytes held) at each entry's first unpack
        self.unmatched, self.unmatched_bytes, self.unmatched_list = 0, 0, []
        self.offloaded_bytes = self.fetched_bytes = 0
        self.prefetches = self.late_fetches = 0
        self.decisions = {KEEP: 0, OFFLOAD: 0}
        self.decided_twice = 0
        self.params = {_storage_key(p) for p in self.model.parameters()}
        self.params |= {_storage_key(b) for b in self.model.buffers()}

    def __enter__(self):
        self._reset()
        self.in_forward = True
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        self.in_forward = False
        return False

    # -- module scopes: the producer module of each storage --------------------
    def _tag(self, x, scope):
        if isinstance(x, torch.Tensor):
            k = _storage_key(x)
            old = self.tags.get(k)
            if old is None or old[1]() is None:
                self.tags[k] = (scope, weakref.ref(x))
        elif isinstance(x, (tuple, list)):
            for v in x:
                self._tag(v, scope)

    def _pre(self, name, _mod, inputs):
        if not self.in_forward:
            return
        # an input not yet tagged was made in the scope around this module
        self._tag(inputs, self.stack[-1] if self.stack else "")
        self.stack.append(name)

    def _post(self, name, _mod, _inputs, output):
        if not self.in_forward:
            return
        if self.stack:
            self.stack.pop()
        self._tag(output, name)
        if name in self.prefetch_modules:
            out = output[0] if isinstance(output, (tuple, list)) and output else output
            fn = getattr(out, "grad_fn", None)
            if fn is not None:
                fn.register_hook(lambda *_a, _n=name: self._prefetch(_n))

    # -- the hooks --------------------------------------------------------------
    def _scope_of(self, t, key):
        tag = self.tags.get(key)
        if tag is not None and tag[1]() is not None:
            return tag[0]
        return self.stack[-1] if self.stack else ""

    def _new_record(self, t, key):
        nbytes = _storage_bytes(t)
        cands = self.by_key.get((self._scope_of(t, key), nbytes), [])
        idx = next((i for i in cands if not self.matched[i]), None)
        if idx is None:
            self.unmatched += 1
            self.unmatched_bytes += nbytes
            self.unmatched_list.append("%s:%d" % (self._scope_of(t, key) or "-", nbytes))
            return _Record(key, weakref.ref(t), None, KEEP, nbytes)
        self.matched[idx] += 1
        e = self.entries[idx]
        rec = _Record(key, weakref.ref(t), e, e["decision"], nbytes)
        return rec

    def _pack(self, t):
        if not self.in_forward:
            return t
        key = _storage_key(t)
        if key in self.params:
            return t
        rec = self.records.get(key)
        if rec is not None and rec.rep() is None and rec.decision == OFFLOAD and rec.dev is None:
            rec = None  # the storage died and its address came back: a new one
        if rec is None:
            rec = self._new_record(t, key)
            self.records[key] = rec
            self.decisions[rec.decision] += 1
            if rec.decision == OFFLOAD:
                self._offload(rec, t)
            else:
                self._hold(rec.bytes)
        rec.packs += 1
        rec.pending += 1
        if rec.decision == OFFLOAD:
            return (rec, t.dtype, t.storage_offset(), tuple(t.size()), tuple(t.stride()), None)
        return (rec, None, 0, None, None, t)

    def _unpack(self, handle):
        if isinstance(handle, torch.Tensor):  # a parameter, not the policy's
            return handle
        rec, dtype, off, size, stride, t = handle
        if not self.bwd_started:
            self.bwd_started, self.in_forward = True, False
            self._prefetch("")
            self.held_start = self.held
        if rec.decision == OFFLOAD:
            if rec.dev is None:
                self.late_fetches += 1
                self._fetch(rec)
            if self.cuda and rec.event is not None:
                torch.cuda.current_stream().wait_event(rec.event)
                rec.event = None
                # made on the side stream, read on this one: not reused before it is done
                rec.dev.record_stream(torch.cuda.current_stream())
            t = torch.empty(0, dtype=dtype, device=rec.dev.device).set_(
                _storage(rec.dev), off, size, stride)
        self.held_trace.append(self.held)
        if rec.entry is not None and rec.pending == rec.packs:
            self.steps.append((rec.entry, self.held))
        rec.pending -= 1
        if rec.pending == 0:
            self._release(rec)
        return t

    # -- moving and counting --------------------------------------------------------
    def _hold(self, n):
        self.held += n
        self.held_peak = max(self.held_peak, self.held)

    def _offload(self, rec, t):
        flat = _flat(t.detach())
        if self.cuda:
            rec.host = torch.empty(flat.numel(), dtype=flat.dtype, pin_memory=True)
            self.side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.side):
                rec.host.copy_(flat, non_blocking=True)
            flat.record_stream(self.side)
        else:
            rec.host = flat.clone()  # the CPU's "host memory": a separate buffer
        self.offloaded_bytes += rec.bytes

    def _fetch(self, rec):
        if self.cuda:
            with torch.cuda.stream(self.side):
                rec.dev = rec.host.to(self.model_device(), non_blocking=True)
                rec.event = torch.cuda.Event()
                rec.event.record(self.side)
        else:
            rec.dev = rec.host.clone()
        self.fetched_bytes += rec.bytes
        self._hold(rec.bytes)

    def _prefetch(self, module):
        for rec in self.records.values():
            if (rec.decision == OFFLOAD and rec.dev is None and rec.pending > 0
                    and rec.prefetch_after == module):
                self.prefetches += 1
                self._fetch(rec)

    def _release(self, rec):
        if rec.decision == OFFLOAD:
            if rec.dev is not None:
                self.held -= rec.bytes
            rec.dev = rec.host = None
        else:
            self.held -= rec.bytes

    def model_device(self):
        return next(self.model.parameters()).device

    def stats(self):
        """What the last iteration did, as a dict (docs/apply.md)."""
        n_expected = sum(1 for e in self.entries if e["decision"] != RECOMPUTE)
        devs = [held - e.get("plan_resident_bytes_at_first_use", held) for e, held in self.steps]
        missed = [e for i, e in enumerate(self.entries)
                  if e["decision"] != RECOMPUTE and not self.matched[i]]
        return {
            "entries": len(self.entries),
            "entries_expected": n_expected,
            "entries_matched_once": sum(1 for i, m in enumerate(self.matched) if m == 1),
            "entries_matched_twice": sum(1 for m in self.matched if m > 1),
            "recompute_entries_seen": sum(1 for i, e in enumerate(self.entries)
                                          if e["decision"] == RECOMPUTE and self.matched[i]),
            "saved_storages": len(self.records),
            "decisions": dict(self.decisions),
            "unmatched": self.unmatched,
            "unmatched_bytes": self.unmatched_bytes,
            "unmatched_storages": list(self.unmatched_list),
            "entries_not_seen": ["%s:%s:%d" % (e["name"], e.get("scope") or "-", e["bytes"])
                                 for i, e in enumerate(self.entries)
                                 if e["decision"] != RECOMPUTE and not self.matched[i]],
            "entries_not_seen_bytes": sum(e["bytes"] for e in missed),
            "entries_not_seen_max_bytes": max([e["bytes"] for e in missed] or [0]),
            "entries_not_seen_resident_bytes": sum(e["bytes"] for e in missed
                                                   if e.get("policy_resident")),
            "steps": len(devs),
            "step_max_over_plan_bytes": max(devs) if devs else 0,
            "step_max_under_plan_bytes": -min(devs) if devs else 0,
            "held_start_bytes": self.held_start if self.held_start is not None else 0,
            "held_peak_backward_bytes": max(self.held_trace) if self.held_trace else 0,
            "held_peak_bytes": self.held_peak,
            "offloaded_bytes": self.offloaded_bytes,
            "fetched_bytes": self.fetched_bytes,
            "prefetches": self.prefetches,
            "late_fetches": self.late_fetches,
            "unpacks": len(self.held_trace),
            "regions": len(self.wrapped),
        }


def apply(model, policy):
    """Apply policy (a dict from load_policy, or a path) to model; returns an
    Applied to enter around each training step. Raises ValueError when the
    policy names a region the model does not have."""
    if isinstance(policy, str):
        policy = load_policy(policy)
    return Applied(model, policy)


# ---- checking and measuring --------------------------------------------------

def _step(model, inputs, target, loss_fn, applied=None):
    model.zero_grad(set_to_none=True)
    if applied is None:
        loss = loss_fn(model(*inputs), target)
        loss.backward()
    else:
        with applied:
            loss = loss_fn(model(*inputs), target)
        loss.backward()
    return loss.detach()


def check(model, inputs, target, policy, loss_fn=None, rtol=1e-4, atol=1e-5):
    """One training step of a copy of model with and one without policy, on the
    same batch; returns a dict: equal (loss and every gradient to tolerance),
    the largest difference, and the policy's stats."""
    loss_fn = loss_fn or record_pytorch._default_loss
    ref = copy.deepcopy(model)
    torch.manual_seed(1)
    l0 = _step(ref, inputs, target, loss_fn)
    applied = apply(model, policy)
    torch.manual_seed(1)
    l1 = _step(model, inputs, target, loss_fn, applied)
    st = applied.stats()
    applied.remove()
    worst, equal = float((l0 - l1).abs()), bool(torch.allclose(l0, l1, rtol=rtol, atol=atol))
    for (n, p0), (_, p1) in zip(ref.named_parameters(), model.named_parameters()):
        if p0.grad is None or p1.grad is None:
            equal = equal and p0.grad is None and p1.grad is None
            continue
        worst = max(worst, float((p0.grad - p1.grad).abs().max()))
        equal = equal and bool(torch.allclose(p0.grad, p1.grad, rtol=rtol, atol=atol))
    return {"equal": equal, "max_abs_diff": worst, "loss": float(l0), "stats": st}


CSV_COLUMNS = ("group,model,batch,planner,seed,budget_fraction,budget_bytes,swap_in_bytes,"
               "swap_out_bytes,simulated_s,measured_s,measured_min_s,measured_max_s,error,"
               "time_scale,canaries,canary_checks,overruns,timed,backend,canary_iterations,"
               "canary_violations,simulated_device,policy,max_memory_allocated,"
               "max_memory_reserved,held_peak_bytes,bytes_moved")


def measure(model, inputs, target, policy, iters, loss_fn=None, with_policy=True):
    """iters training steps (after one warm-up) with or without the policy:
    a dict of measured figures (times in s, memory in bytes)."""
    loss_fn = loss_fn or record_pytorch._default_loss
    applied = apply(model, policy) if with_policy else None
    cuda = next(model.parameters()).is_cuda
    times, peak_held, moved = [], 0, 0
    try:
        _step(model, inputs, target, loss_fn, applied)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        for _ in range(iters):
            t0 = time.perf_counter()
            _step(model, inputs, target, loss_fn, applied)
            if cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            if applied:
                st = applied.stats()
                peak_held = max(peak_held, st["held_peak_bytes"])
                moved += st["offloaded_bytes"] + st["fetched_bytes"]
    finally:
        if applied:
            applied.remove()
    return {"measured_s": sum(times) / len(times), "measured_min_s": min(times),
            "measured_max_s": max(times),
            "max_memory_allocated": torch.cuda.max_memory_allocated() if cuda else "",
            "max_memory_reserved": torch.cuda.max_memory_reserved() if cuda else "",
            "held_peak_bytes": peak_held, "bytes_moved_per_iteration": moved // max(iters, 1)}


def _csv_row(policy, m, model_name, batch, backend, with_policy):
    sim = policy.get("simulated", {})
    plan = policy.get("plan", {})
    sim_s = sim.get("iteration_time_s", "")
    # the relative error says something only on the GPU the plan was made for
    err = ("%.6g" % ((m["measured_s"] - sim_s) / sim_s)
           if with_policy and backend == "pytorch-cuda" and isinstance(sim_s, (int, float))
           and sim_s > 0 else "")
    vals = ["pytorch", os.path.basename(model_name), batch,
            plan.get("planner", "") if with_policy else "none",
            "", "", plan.get("budget_bytes", "") if with_policy else "",
            sim.get("swap_in_bytes", "") if with_policy else 0,
            sim.get("swap_out_bytes", "") if with_policy else 0,
            sim_s if with_policy else "", "%.9g" % m["measured_s"], "%.9g" % m["measured_min_s"],
            "%.9g" % m["measured_max_s"], err, "", "", "", "", "true", backend, "", "",
            sim.get("device", ""), "applied" if with_policy else "none",
            m["max_memory_allocated"], m["max_memory_reserved"], m["held_peak_bytes"],
            m["bytes_moved_per_iteration"]]
    return ",".join(str(v) for v in vals)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="apply_plan.py",
        description="Apply a policy from `swapsim export --format pytorch` to a model: check "
                    "its gradients, or measure it.")
    ap.add_argument("model", help="torchvision name (resnet18), hf:NAME, or FILE.py:FUNC")
    ap.add_argument("--policy", required=True, action="append",
                    help="the policy (swapsim export -o POLICY); --check takes several")
    ap.add_argument("--batch", type=int, default=32, help="samples per iteration (default 32)")
    ap.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda if "
                    "available, else cpu)")
    ap.add_argument("--image-size", type=int, default=0, help="torchvision models: input size")
    ap.add_argument("--seq-len", type=int, default=0, help="hf: models: tokens per sample")
    ap.add_argument("--check", action="store_true",
                    help="one step with and one without the policy: equal loss and gradients")
    ap.add_argument("--measure", type=int, default=0, metavar="N",
                    help="N iterations with and N without the policy")
    ap.add_argument("--csv", help="--measure: append a row per run to this CSV")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    a = ap.parse_args(argv)
    if torch is None:
        fail("PyTorch is not installed for %s (apt-get install python3-torch)" % sys.executable)
    if a.batch < 1:
        fail("--batch: expected a positive integer, got %d" % a.batch)
    if a.measure < 0:
        fail("--measure: expected an integer >= 0, got %d" % a.measure)
    if a.measure and len(a.policy) > 1:
        fail("--measure: expected one --policy, got %d" % len(a.policy))
    try:
        policies = [load_policy(p) for p in a.policy]
    except ValueError as e:
        fail(str(e))
    policy = policies[0]
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if a.model.startswith("hf:"):
        spec = record_pytorch._huggingface(a.model[3:], a.batch, a.seq_len)
    elif ".py:" in a.model:
        spec = record_pytorch._from_file(a.model, a.batch, device)
    else:
        spec = record_pytorch._torchvision(a.model, a.batch, a.image_size)
    dev = torch.device(device)
    model = spec["model"].to(dev).train()
    inputs = spec["inputs"] if isinstance(spec["inputs"], (tuple, list)) else (spec["inputs"],)
    inputs = record_pytorch._to(tuple(inputs), dev)
    target = record_pytorch._to(spec.get("target"), dev)
    loss_fn = spec.get("loss")
    out = {"device": str(dev), "simulated": policy.get("simulated", {}), "checks": []}
    rc = 0
    try:
        for path, pol in zip(a.policy, policies) if a.check or not a.measure else ():
            c = check(model, inputs, target, pol, loss_fn)
            c["policy"], c["summary"] = path, pol.get("summary", {})
            out["checks"].append(c)
            rc = rc or (0 if c["equal"] else 1)
        if a.measure:
            backend = "pytorch-" + dev.type
            runs = []
            for with_policy in (False, True):
                m = measure(model, inputs, target, policy, a.measure, loss_fn, with_policy)
                m["policy"] = with_policy
                runs.append(m)
                if a.csv:
                    new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
                    with open(a.csv, "a") as f:
                        if new:
                            f.write(CSV_COLUMNS + "\n")
                        f.write(_csv_row(policy, m, a.model, a.batch, backend, with_policy) + "\n")
            out["measure"] = runs
    except ValueError as e:
        fail(str(e).splitlines()[0])
    if a.json:
        print(json.dumps(out, sort_keys=True))
    else:
        for c in out["checks"]:
            s = c["stats"]
            print("check %s: %s (largest difference %.3g); %d of %d policy entries applied once, "
                  "%d saved storages not in the policy (%d bytes); held %d bytes at backward "
                  "start, %d at most; %d bytes offloaded" % (
                      c["policy"], "equal gradients" if c["equal"] else "GRADIENTS DIFFER",
                      c["max_abs_diff"],
                      s["entries_matched_once"], s["entries_expected"], s["unmatched"],
                      s["unmatched_bytes"], s["held_start_bytes"], s["held_peak_backward_bytes"],
                      s["offloaded_bytes"]))
        for m in out.get("measure", []):
            print("%s: %.6f s per iteration (min %.6f), max_memory_allocated %s, "
                  "max_memory_reserved %s, hooks held at most %d bytes, %d bytes moved" % (
                      "with the policy" if m["policy"] else "without", m["measured_s"],
                      m["measured_min_s"], m["max_memory_allocated"] or "-",
                      m["max_memory_reserved"] or "-", m["held_peak_bytes"],
                      m["bytes_moved_per_iteration"]))
        if "measure" in out and out["simulated"]:
            print("simulated (swapsim, %s): %.6f s per iteration, peak %d bytes" % (
                out["simulated"].get("device", "?"), out["simulated"].get("iteration_time_s", 0),
                out["simulated"].get("peak_memory_bytes", 0)))
    for c in out["checks"]:
        if not c["equal"]:
            print("apply_plan.py: %s: the gradients with the policy differ from those without "
                  "(largest difference %.3g)" % (c["policy"], c["max_abs_diff"]), file=sys.stderr)
            break
    return rc


if __name__ == "__main__":
    sys.exit(main())
