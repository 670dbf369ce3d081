"""The tuner end to end on the CPU: Triton's interpreter runs every config (so a config
that computes wrong would be caught) and a stand-in timer gives each config a latency."""

from __future__ import annotations

import math
import time
from dataclasses import replace

from kernelcraft.db import Database
from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.search.strategy import Effort
from kernelcraft.space import Config
from kernelcraft.spaces import space_for
from kernelcraft.target import resolve
from kernelcraft.tune import TuneOptions

SMALL = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2.0 + 1.0

def get_inputs(): return [torch.randn(12, 500)]
def get_init_inputs(): return []
"""


def fake_latency(cfg: dict) -> float:
    """A latency landscape with one optimum (BLOCK 512, 2 warps)."""
    return 1.0 + abs(math.log2(cfg["BLOCK"]) - 9) + 0.3 * abs(math.log2(cfg["num_warps"]) - 1)


def make_timer(calls: list, crash_block: int | None = None):
    def timer(fn, sets):
        table = fn.__globals__["_KC_TUNED"]  # the wrapper's module: what the runner set
        cfg = next((c for (w, _, _), c in table.items() if w == fn.__name__), None)
        calls.append(cfg)
        if cfg is None:
            return fake_latency({"BLOCK": 1024, "num_warps": 4})  # the heuristic's pick
        if cfg["BLOCK"] == crash_block:
            raise RuntimeError("launch failed")
        return fake_latency(cfg)

    return timer


#: the quick profile without its wall-time limits (a loaded CI machine must not cut a test)
EFFORT = Effort(max_measured=16, max_seconds=3600, batch=8, proposals=64, population=8,
                epsilon=0.25, patience=2)


def _opts(tmp_path, timer, **kw):
    tune = TuneOptions(effort=EFFORT, timer=timer, db_path=tmp_path / "t.db", progress=False,
                       use_model=False, **kw)
    return GenerateOptions(targets="sm_90", out_dir=tmp_path / "out", device="cpu",
                           build=False, judge=False, tune=tune)


def test_tuning_finds_a_faster_config_and_the_second_run_is_a_database_hit(write, tmp_path):
    calls: list = []
    problem = write("small.py", SMALL)
    gen = generate(problem, replace(_opts(tmp_path, make_timer(calls), build=True),
                                    cache=True))
    (t,) = gen.tunings
    assert t.source == "searched" and t.measured >= 8
    assert t.best_ms < t.default_ms  # the heuristic's 1024/4 is not the optimum
    assert t.best_ms == min(fake_latency(c) for c in calls if c)
    text = gen.module_path.read_text()
    assert "_KC_TUNED.update({" in text and "'sm_90'" in text
    assert (gen.module_path.parent / "tuning.png").exists()
    assert "## Tuning" in gen.report_path.read_text()
    with Database(tmp_path / "t.db") as db:
        (w,) = db.workloads()
        assert w["records"] == t.measured and db.best(w["key"]).latency_ms == t.best_ms
        # nothing is left "in flight"
        assert not [r for r in db.records(w["key"]) if r.status == "timeout"]

    calls.clear()
    start = time.monotonic()
    again = generate(problem, _opts(tmp_path, make_timer(calls)))
    assert again.tunings[0].source == "database" and not calls  # nothing measured
    assert again.tunings[0].config == t.config
    assert time.monotonic() - start < 30
    # the whole module from the database (its convergence plot too), nothing measured
    hit = generate(problem, replace(_opts(tmp_path, make_timer(calls), build=True),
                                    cache=True, out_dir=tmp_path / "o2"))
    assert hit.cached and not calls
    assert hit.module_path.read_text() == text
    assert (hit.module_path.parent / "tuning.png").read_bytes() == (
        gen.module_path.parent / "tuning.png").read_bytes()


def test_failing_configs_are_recorded_and_never_chosen(write, tmp_path):
    calls: list = []
    gen = generate(write("small.py", SMALL), _opts(tmp_path, make_timer(calls, 512)))
    (t,) = gen.tunings
    assert t.config["BLOCK"] != 512
    with Database(tmp_path / "t.db") as db:
        (w,) = db.workloads()
        crashed = db.records(w["key"], status="crash")
    if any(c and c["BLOCK"] == 512 for c in calls):  # the search did try one
        assert crashed and all(r.config_dict["BLOCK"] == 512 for r in crashed)


def test_generated_module_with_tuned_configs_is_still_correct(write, tmp_path):
    """The judge runs the module after tuning (the interpreter applies no GPU entries)."""
    calls: list = []
    opts = _opts(tmp_path, make_timer(calls))
    opts.judge = True
    gen = generate(write("small.py", SMALL), opts)
    assert gen.judge.correct, gen.judge.detail


def test_other_targets_take_configs_from_the_database(write, tmp_path):
    """No GPU of that kind here: configs measured there earlier (database) are emitted."""
    from kernelcraft.generate import build
    from kernelcraft.problem import load_problem
    from kernelcraft.tune import signature

    problem = load_problem(write("small.py", SMALL))
    variant = build(problem, GenerateOptions(targets="gfx942"))
    (gid, k), = variant.kernels.items()
    g = next(g for g in variant.plan.groups if g.id == gid)
    cfg = {"BLOCK": 256, "num_warps": 4, "FASTDIV": False}
    assert space_for(k, "pointwise", resolve("gfx942")).valid(Config(cfg))
    with Database(tmp_path / "t.db") as db:
        wl = db.add_workload(signature(g, k, "pointwise"), "gfx942", "fp32", family="pointwise")
        db.add_record(wl, cfg, "ok", 0.5)
    opts = GenerateOptions(targets="gfx942", out_dir=tmp_path / "out", device="cpu",
                           build=False, judge=False, db_path=tmp_path / "t.db")
    gen = generate(problem.path, opts)
    assert gen.tuned_from_db == {"gfx942": 1}
    assert ("'gfx942', (6000,)): {'BLOCK': 256, 'FASTDIV': False, 'num_warps': 4}"
            in gen.module_path.read_text())


def test_runner_marks_wrong_and_crashing_configs():
    """A config whose kernel computes a wrong value, or raises, is a result, not a winner."""
    import torch

    from kernelcraft.tune import TuneOptions, _Runner

    class Module:
        _KC_TUNED: dict = {}

    def fn(x):
        cfg = Module._KC_TUNED.get(("w", "cpu", (4,)))
        if cfg["BLOCK"] == 128:
            raise RuntimeError("out of resources")
        return (x * 2 + (1e-3 if cfg["BLOCK"] == 256 else 0.0),)

    r = object.__new__(_Runner)
    x = torch.randn(4)
    r.module, r.fn, r.args, r.key = Module, fn, [x], ("w", "cpu", (4,))
    r.device, r.precision = torch.device("cpu"), "fp32"
    r.ref, r.ref64 = [x * 2], [x.double() * 2]
    r.opts, r.timer = TuneOptions(measure_timeout_s=60), lambda f, s: 1.0
    assert r._run(Config({"BLOCK": 64})).status == "ok"
    assert r._run(Config({"BLOCK": 256})).status == "wrong"
    crash = r._run(Config({"BLOCK": 128}))
    assert crash.status == "crash" and "out of resources" in crash.error
    assert not Module._KC_TUNED  # the override never outlives its measurement


HANG_SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
from kernelcraft.generate import generate
from test_tune import _opts, make_timer, fake_latency

calls = []
inner = make_timer(calls)
def timer(fn, sets):
    ms = inner(fn, sets)
    if calls[-1] and calls[-1]["BLOCK"] == {hang}:
        time.sleep(120)  # a kernel that never finishes
    return ms
opts = _opts(Path({tmp!r}), timer)
opts.tune.measure_timeout_s = {limit}
gen = generate(Path({problem!r}), opts)
print("BEST", gen.tunings[0].config, gen.tunings[0].source)
"""


def test_a_hanging_config_stops_the_tuner_and_the_rerun_resumes(write, tmp_path):
    """The watchdog ends a tuner stuck in one config; the database keeps that config as a
    timeout (never retried, never chosen) and a rerun resumes from the records."""
    import subprocess
    import sys
    from pathlib import Path

    problem = write("small.py", SMALL)
    tests = str(Path(__file__).parent)
    # limits well above a measurement on a loaded two-core machine (the interpreter), well
    # below the hang
    script = HANG_SCRIPT.format(tests=tests, hang=2048, tmp=str(tmp_path), problem=str(problem),
                                limit=15)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 124, run.stderr[-2000:]
    with Database(tmp_path / "t.db") as db:
        (w,) = db.workloads()
        timeouts = db.records(w["key"], status="timeout")
        assert [r.config_dict["BLOCK"] for r in timeouts] == [2048]
        before = db.count(w["key"])
    script = HANG_SCRIPT.format(tests=tests, hang=-1, tmp=str(tmp_path), problem=str(problem),
                                limit=60)
    rerun = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    with Database(tmp_path / "t.db") as db:
        recs = db.records(w["key"])
        assert len(recs) > before  # resumed: more configs measured, none twice
        assert len({r.config for r in recs}) == len(recs)
        assert [r.config_dict["BLOCK"] for r in recs if r.status == "timeout"] == [2048]
    assert "BEST" in rerun.stdout and "'BLOCK': 2048" not in rerun.stdout


def test_the_heuristic_config_is_kept_when_nothing_beats_it(write, tmp_path):
    calls: list = []

    def timer(fn, sets):
        cfg = next((c for (w, _, _), c in fn.__globals__["_KC_TUNED"].items()
                    if w == fn.__name__), None)
        calls.append(cfg)
        return 0.5 if cfg is None else fake_latency(cfg)  # the untuned path is the fastest

    gen = generate(write("small.py", SMALL), _opts(tmp_path, timer))
    (t,) = gen.tunings
    assert t.measured >= 8 and t.best_ms == t.default_ms == 0.5
    assert t.config == {"BLOCK": 1024, "num_warps": 4, "FASTDIV": False}  # the heuristic's
    with Database(tmp_path / "t.db") as db:
        (w,) = db.workloads()
        assert db.best(w["key"]).latency_ms == 0.5  # a database hit returns it too


def test_candidates_spilling_more_than_the_heuristic_config_are_pruned(write, tmp_path,
                                                                        monkeypatch):
    import kernelcraft.build as build

    def fake_compile(path, specs, targets, timeout_s=600.0, jobs=1):
        def spills(spec):
            consts = spec["constexprs"]  # a pointwise tile: XBLOCK columns by YBLOCK rows
            block = consts["XBLOCK"] * consts["YBLOCK"]
            return 100 if block == 1024 else 50 if block < 1024 else 200

        return [{"kernel": s["name"], "target": "sm_90", "ok": True, "registers": 64,
                 "spills": spills(s), "shared": 0} for s in specs]

    monkeypatch.setattr(build, "cross_compile", fake_compile)
    calls: list = []
    gen = generate(write("small.py", SMALL), _opts(tmp_path, make_timer(calls), build=True))
    (t,) = gen.tunings
    assert all(c is None or c["BLOCK"] <= 1024 for c in calls)  # none above was measured
    assert any(c and c["BLOCK"] < 1024 for c in calls)  # spilling less than it: measured
    with Database(tmp_path / "t.db") as db:
        (w,) = db.workloads()
        pruned = db.records(w["key"], status="pruned")
    assert pruned and all(r.config_dict["BLOCK"] > 1024 for r in pruned)
    assert all("(the heuristic's config: 100)" in r.error for r in pruned)


SEGMENT = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, batch):
        # a scatter of ones made with an explicit float32 dtype: the tuner's float64
        # reference must cast them as the program's float64 counterpart would
        counts = torch.zeros(16, device=x.device).scatter_add(
            0, batch, torch.ones_like(batch, dtype=torch.float32))
        return x.sum(1) / counts.clamp(min=1.0)[batch]

def get_inputs(): return [torch.randn(300, 8), torch.randint(0, 16, (300,))]
def get_init_inputs(): return []
"""


def test_scatter_groups_are_tuned(write, tmp_path):
    calls: list = []
    gen = generate(write("segment.py", SEGMENT), _opts(tmp_path, make_timer(calls)))
    tuned = [t for t in gen.tunings if t.family == "scatter"]
    assert tuned and all(t.source == "searched" and t.measured >= 8 for t in tuned), tuned
    with Database(tmp_path / "t.db") as db:
        for w in db.workloads():
            # every config ran and matched the float64 reference (none wrong or crashed)
            assert not db.records(w["key"], status="wrong")
            assert not db.records(w["key"], status="error")
