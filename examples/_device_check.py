# TEMPORARY device check (removed after use).
import copy
import importlib.util
import os
import statistics
import sys
import time

import torch
import triton

ROOT = os.path.dirname(os.path.abspath(__file__))
dev = "cuda"


def load(kind, name):
    spec = importlib.util.spec_from_file_location(f"{kind}_{name}", f"{ROOT}/{kind}/{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES = {
    "softmax": [([], [(37, 101)]), ([], [(5, 1000)]), ([], [(3, 7, 20000)]), ([], [(64, 1)])],
    "log_softmax": [([], [(37, 101)]), ([], [(6, 50001)]), ([], [(2, 300, 3)])],
    "layernorm": [([101, 1e-5], [(37, 101)]), ([20001, 1e-5], [(3, 5, 20001)])],
    "rmsnorm": [([101, 1e-6], [(37, 101)]), ([40000, 1e-6], [(7, 40000)])],
    "gelu": [([], [(3, 5, 7, 11)]), ([], [(1000, 333)])],
    "matmul_bias_relu": [([101, 53], [(37, 101)]), ([333, 100], [(5, 333)]),
                         ([1000, 333], [(517, 1000)]), ([101, 17], [(2, 3, 101)])],
    "row_sum": [([], [(3, 65, 53)]), ([], [(5, 4000, 33)]), ([], [(2, 17, 3, 5)])],
    "scale_residual": [([333], [(1000, 333), (1000, 333)]), ([5000], [(3, 5000), (3, 5000)])],
}


def rand_params(model, g):
    with torch.no_grad():
        for p in model.parameters():
            r = torch.randn(p.shape, generator=g, device=p.device)
            p.copy_(r / p.shape[1] ** 0.5 if p.dim() == 2 else r)


def errs(out, ref):
    d = out.double() - ref
    return (d.norm() / ref.norm()).item(), d.abs().max().item()


def small(name):
    prob, cand = load("problems", name), load("candidates", name)
    worst = [0.0, 0.0]
    for init, shapes in CASES[name]:
        for nc in (False, True):
            g = torch.Generator(device=dev).manual_seed(1)
            model = prob.Model(*init).to(dev)
            rand_params(model, g)
            new = cand.ModelNew(*init).to(dev)
            new.load_state_dict(model.state_dict())
            xs = [torch.randn(s, generator=g, device=dev) * 3 for s in shapes]
            if nc:
                xs = [x.transpose(-1, -2).contiguous().transpose(-1, -2) for x in xs]
            with torch.no_grad():
                ref = copy.deepcopy(model).double()(*[x.double() for x in xs])
                out = new(*xs)
            torch.cuda.synchronize()
            e, m = errs(out, ref)
            worst = [max(worst[0], e), max(worst[1], m)]
            if not (e < 1e-5):
                print(f"  SMALL FAIL {name} {init} {shapes} nc={nc} rel={e:.2e} max={m:.2e}")
    return worst


FLUSH = None


def bench(fn, args, reps=20):
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(512 * 1024 * 1024 // 4, device=dev)
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(reps):
        FLUSH.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*args)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def full(name):
    prob, cand = load("problems", name), load("candidates", name)
    torch.manual_seed(0)
    init = prob.get_init_inputs()
    model = prob.Model(*init).to(dev)
    g = torch.Generator(device=dev).manual_seed(0)
    rand_params(model, g)
    new = cand.ModelNew(*init).to(dev)
    new.load_state_dict(model.state_dict())
    xs = [x.to(dev) for x in prob.get_inputs()]
    with torch.no_grad():
        ref = copy.deepcopy(model).double()(*[x.double() for x in xs])
        out = new(*xs)
        o32 = model(*xs)
        torch.cuda.synchronize()
        e, m = errs(out, ref)
        e32, m32 = errs(o32, ref)
        del ref
        t_new = bench(new, xs)
        t_ref = bench(model, xs)
    nbytes = sum(x.numel() * 4 for x in xs) + out.numel() * 4
    print(f"{name:17s} FULL rel={e:.2e} max={m:.2e} (eager rel={e32:.2e} max={m32:.2e}) "
          f"cand={t_new:.3f}ms eager={t_ref:.3f}ms speedup={t_ref / t_new:.2f}x "
          f"cand_bw={nbytes / t_new / 1e9:.2f}TB/s", flush=True)


if __name__ == "__main__":
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
    names = sys.argv[1:] or list(CASES)
    for name in names:
        t0 = time.time()
        w = small(name)
        print(f"{name:17s} small worst rel={w[0]:.2e} max={w[1]:.2e} ({time.time()-t0:.1f}s)",
              flush=True)
        full(name)
        torch.cuda.empty_cache()
