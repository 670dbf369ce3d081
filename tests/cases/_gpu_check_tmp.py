# throwaway: run honest controls and cheats compiled on a CUDA GPU
import importlib.util, sys, torch, triton, pathlib
B = pathlib.Path(__file__).parent
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, str(path))
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
_empty_like = torch.empty_like
def poisoned_empty_like(*a, **k):
    t = _empty_like(*a, **k); t.fill_(float("nan")) if t.is_floating_point() else None; return t
torch.empty_like = poisoned_empty_like
cases = [("honest/softmax_ok", "softmax"), ("honest/tanh_gelu_ok", "tanh_gelu"), ("honest/relu_ok", "relu_pos"),
         ("honest/linear_relu_ok", "linear_relu")] + [("cheats/" + c, p) for c, p in [
    ("memo_output", "softmax"), ("zeros", "softmax"), ("alias_input", "relu_pos"), ("inplace_input", "softmax"),
    ("fp16_math", "tanh_gelu"), ("shape_specialised", "softmax"), ("fallback_reference", "softmax"),
    ("side_stream", "tanh_gelu"), ("stale_empty", "softmax"), ("gc_scavenge", "softmax"), ("partial_write", "tanh_gelu"),
    ("reused_buffer", "linear_relu"), ("kernel_once", "softmax"), ("empty_grid", "softmax"), ("wrong_dtype", "tanh_gelu"),
    ("decoy_kernel", "softmax"), ("pickle_payload", "softmax"), ("memo_global", "softmax")]]
for cand, prob in cases:
    P = load(B / "problems" / f"{prob}.py", "p_" + prob); C = load(B / f"{cand}.py", "c_" + cand.replace("/", "_"))
    res = []
    for sizes in [dict(batch=64, dim=256, in_features=128, out_features=96), dict(batch=7, dim=1000, in_features=77, out_features=45)]:
        for k, v in sizes.items():
            if hasattr(P, k): setattr(P, k, v)
        torch.manual_seed(0)
        ref = P.Model(*P.get_init_inputs()).cuda()
        new = C.ModelNew(*P.get_init_inputs()).cuda(); new.load_state_dict(ref.state_dict())
        xs = [x.cuda() for x in P.get_inputs()]
        out = new(*xs)
        early = out.clone()  # on the calling stream, no device sync
        torch.cuda.synchronize()
        exp = ref.double()(*[x.double() for x in xs])
        if out.shape != exp.shape: res.append("shape"); continue
        e = ((out.double() - exp).norm() / exp.norm()).item()
        e32 = ((ref.float()(*xs).double() - exp).norm() / exp.norm()).item()
        ee = ((early.double() - exp).norm() / exp.norm()).item()
        res.append(f"rel {e:.1e} (torch {e32:.1e}) early {ee:.1e} {out.dtype}")
    print(f"{cand:32s}", " | ".join(res), flush=True)
H = load(B / "cheats/hang.py", "hang")
x = torch.rand(64, device="cuda"); y = torch.empty_like(x); f = torch.zeros(1, device="cuda", dtype=torch.int32)
H._spin.warmup(f, x, y, 64, BLOCK=1024, grid=(1,)); print("hang kernel compiles")
print(torch.__version__, triton.__version__, torch.cuda.get_device_name())
