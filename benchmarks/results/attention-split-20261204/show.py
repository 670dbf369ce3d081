"""One line per row of an attention_gpu.py JSON-lines file (shape, config, ms, error, registers)."""
import json
import sys

for line in open(sys.argv[1]):
    r = json.loads(line)
    c = r.get("config")
    c = "heur" if not isinstance(c, dict) else "%dx%dx%dx%d s%d" % (
        c["BLOCK_M"], c["BLOCK_N"], c["num_warps"], c["num_stages"], c.get("SPLIT", 0))
    ms = "%.3f" % r["ms"] if r.get("ms") else r.get("error", "")[:40]
    err = r.get("max_abs") and "%.1e/%.1e" % (r["max_abs"], r["tol_abs"])
    print(r["seq"], r["head_dim"], int(r["causal"]), r["impl"][:10], c, ms,
          "ok" if r.get("ok") else r.get("ok"), err, r.get("n_regs"), r.get("n_spills"))
