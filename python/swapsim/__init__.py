"""swapsim: plan and simulate training of deep networks beyond GPU memory.

A thin door to the C library libswapsim.so (its JSON interface,
api/swapsim_api.h) through ctypes: no parsing of the command line's text.
Profiles are JSON texts (the profile format, docs/profile-format.md);
results are plain dicts, or pandas DataFrames where pandas is importable
(``as_frame=False`` forces dicts). The numbers are the command line's:
``swapsim.sweep`` gives what ``swapsim sweep`` gives.

    import swapsim
    prof = swapsim.model("resnet", depth=50, batch=64, device="h100")
    swapsim.run(prof, "dtr", memory="0.5x")["normalized_throughput"]
    swapsim.sweep(prof, planners=["dtr", "odswap"], memory="0.3x:1.0x:0.1x", fit=True)
"""
import ctypes
import json
import os

__all__ = ["Profile", "load", "model", "import_profile", "stats", "run", "sweep",
           "largest_batch", "library_path", "SwapsimError"]


class SwapsimError(Exception):
    """An error the library reported (bad input, unknown name): its one-line message."""


def _candidates():
    env = os.environ.get("SWAPSIM_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libswapsim.so")  # installed by make python
    yield os.path.join(here, "..", "..", "build", "pic", "libswapsim.so")  # the source tree


def library_path():
    """The libswapsim.so this package loads ($SWAPSIM_LIB, beside the package, or the
    source tree's build/pic/), or raises SwapsimError saying where it looked."""
    tried = []
    for c in _candidates():
        c = os.path.normpath(c)
        if os.path.isfile(c):
            return c
        tried.append(c)
    raise SwapsimError("libswapsim.so not found (looked at %s): run 'make lib' or 'make python', "
                       "or set SWAPSIM_LIB" % ", ".join(tried))


_lib = None


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path())
        for name, args in (("swapsim_profile_load", 1), ("swapsim_model", 2),
                           ("swapsim_import", 3), ("swapsim_stats", 1), ("swapsim_run", 2),
                           ("swapsim_sweep", 2)):
            f = getattr(lib, name)
            f.restype = ctypes.c_void_p
            f.argtypes = [ctypes.c_char_p] * args + [ctypes.POINTER(ctypes.c_void_p)]
        lib.swapsim_free.argtypes = [ctypes.c_void_p]
        lib.swapsim_free.restype = None
        lib.swapsim_api_version.restype = ctypes.c_int
        if lib.swapsim_api_version() != 1:
            raise SwapsimError("libswapsim.so speaks API version %d; this package, 1"
                               % lib.swapsim_api_version())
        _lib = lib
    return _lib


def _enc(s):
    return None if s is None else s.encode("utf-8")


def _call(name, *args):
    """Call a JSON-returning function; its text, or SwapsimError with its message."""
    lib = _load()
    err = ctypes.c_void_p()
    p = getattr(lib, name)(*[_enc(a) for a in args], ctypes.byref(err))
    if not p:
        msg = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else name
        lib.swapsim_free(err)
        raise SwapsimError(msg)
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        lib.swapsim_free(p)


class Profile:
    """A profile: its JSON text (``.text``) and a few of its fields."""

    def __init__(self, text):
        self.text = text
        head = json.loads(text)
        self.name = head.get("name")
        self.batch = head.get("batch")

    def __repr__(self):
        return "Profile(%r, batch %r)" % (self.name, self.batch)

    def save(self, path):
        """Write it as a profile file the command line reads."""
        with open(path, "w") as f:
            f.write(self.text)


def _text(profile):
    if isinstance(profile, Profile):
        return profile.text
    if isinstance(profile, str) and not profile.lstrip().startswith("{"):
        return load(profile).text  # a path
    return profile


def load(path):
    """A profile file (swapsim model -o, swapsim import -o; gzip too)."""
    return Profile(_call("swapsim_profile_load", os.fspath(path)))


def model(name, **options):
    """A generated profile: model("resnet", depth=50, batch=64, device="h100");
    'swapsim models --verbose' lists the generators and their options."""
    return Profile(_call("swapsim_model", name, json.dumps(options)))


def import_profile(fmt, files, **options):
    """A recorded profile: import_profile("pytorch", [et, kineto], batch=64), as
    swapsim import FORMAT FILE...; record with tools/record_pytorch.py."""
    return Profile(_call("swapsim_import", fmt, json.dumps([os.fspath(f) for f in files]),
                         json.dumps(options)))


def stats(profile):
    """Memory figures: peak_memory_bytes (the ideal peak: what fits without a planner),
    total_tensor_bytes, footprint_bytes, device_memory_bytes..."""
    return json.loads(_call("swapsim_stats", _text(profile)))


def run(profile, planner, memory=None, seed=1, time_budget_s=None, **settings):
    """Plan, verify and simulate (swapsim run --json): a dict with "fits" and, when it
    fits, normalized_throughput, samples_per_s, iteration_time_s...; settings are the
    planner's hyperparameters (swapsim planners --verbose)."""
    req = {"planner": planner, "seed": seed}
    if memory is not None:
        req["memory"] = memory
    if time_budget_s is not None:
        req["time_budget_s"] = time_budget_s
    if settings:
        req["set"] = settings
    return json.loads(_call("swapsim_run", _text(profile), json.dumps(req)))


def _frame(rows, as_frame):
    if as_frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return rows
    return pandas.DataFrame(rows)


def sweep(profile, planners="all", memory="0.3x:1.0x:0.1x", fit=False, fit_tol="0.01x",
          seed=1, time_budget_s=5, as_frame=None, raw=False):
    """swapsim sweep in this process: every planner at every budget (a list "0.5x,16GiB"
    or a range "0.3x:1.0x:0.1x"), with the lower bound ("bound"); fit=True adds each
    planner's smallest budget that fits (bisection to fit_tol).

    Returns the cells (one row each: planner, budget_bytes, budget_x, fits,
    normalized_throughput, ...) as a DataFrame where pandas is present, else a list of
    dicts; raw=True returns swapsim sweep's whole JSON (a dict, with "fit")."""
    req = {"planners": planners, "memory": memory, "fit": bool(fit), "fit_tol": fit_tol,
           "seed": seed, "time_budget_s": time_budget_s}
    out = json.loads(_call("swapsim_sweep", _text(profile), json.dumps(req)))
    return out if raw else _frame(out["cells"], as_frame)


def largest_batch(model_name, batch, memory, planners="all", seed=1, time_budget_s=5,
                  as_frame=None, raw=False, **options):
    """Per planner, the largest batch of a generated model that fits in memory (a size),
    by bisection over batch ("16:512"), with its samples/s (swapsim sweep --model
    --batch). Returns the per-planner rows (a DataFrame or dicts), raw=True the JSON."""
    req = {"planners": planners, "memory": memory, "batch": str(batch), "model": model_name,
           "model_options": options, "seed": seed, "time_budget_s": time_budget_s}
    out = json.loads(_call("swapsim_sweep", None, json.dumps(req)))
    return out if raw else _frame(out["largest_batch"]["planners"], as_frame)
