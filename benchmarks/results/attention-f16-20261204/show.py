"""One line per row of an attention_gpu.py JSON-lines file (shape, config, ms, error, registers)."""
import json
import sys

for line in open(sys.argv[1]):
    r = json.loads(line)
    c = r.get("config")
    if isinstance(c, dict):
        c = (f"{c['BLOCK_M']}x{c['BLOCK_N']}x{c['num_warps']}x{c['num_stages']} "
             f"s{c.get('SPLIT', 0)}")
    else:
        c = "heur"
    ms = f"{r['ms']:.3f}" if r.get("ms") else r.get("error", "")[:40]
    err = r.get("max_abs") and f"{r['max_abs']:.1e}/{r['tol_abs']:.1e}"
    print(r["seq"], r["head_dim"], int(r["causal"]), r["impl"][:10], c, ms,
          "ok" if r.get("ok") else r.get("ok"), err, r.get("n_regs"), r.get("n_spills"))
