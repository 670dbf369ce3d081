"""Several judges on one GPU: timing sections never overlap each other or shared work."""

import multiprocessing as mp
import time


def _worker(i, q, path):
    import os

    os.environ["KERNELCRAFT_GPU_LOCK"] = path
    from kernelcraft.measure import gpulock

    gpulock.hold_shared()
    q.put(("work", i, time.time()))  # shared work runs while nobody times
    time.sleep(0.1)
    with gpulock.exclusive():
        q.put(("in", i, time.time()))
        time.sleep(0.2)
        q.put(("out", i, time.time()))
    q.put(("work", i, time.time()))


def test_exclusive_sections_are_alone(tmp_path):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(i, q, str(tmp_path / "gpu.lock")))
             for i in range(4)]
    for p in procs:
        p.start()
    events = [q.get(timeout=60) for _ in range(16)]
    for p in procs:
        p.join(timeout=60)
    events.sort(key=lambda e: e[2])
    inside = None
    for kind, i, _ in events:
        if kind == "in":
            assert inside is None, events
            inside = i
        elif kind == "out":
            inside = None
        else:
            assert inside is None, f"process {i} worked while {inside} timed: {events}"


def test_memory_fraction_caps_each_sharing_process(monkeypatch):
    """A shard's process and its workers cap their allocator once, when they first share."""
    import torch

    from kernelcraft.measure import gpulock

    calls = []
    monkeypatch.setenv("KERNELCRAFT_GPU_MEMORY_FRACTION", "0.45")
    monkeypatch.delenv("KERNELCRAFT_GPU_LOCK", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", calls.append)
    monkeypatch.setitem(gpulock._state, "capped", 0)
    with gpulock.shared():
        pass
    with gpulock.shared():
        pass
    assert calls == [0.45]
