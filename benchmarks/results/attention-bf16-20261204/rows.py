"""Print the template's rows of an attention_gpu.py / ws_probe.py JSON-lines file, one per
line: shape, implementation (and --alt file), config, ms, speedup, check, registers.

Usage: python3 rows.py FILE.jsonl
"""

import json
import sys

for line in open(sys.argv[1]):
    r = json.loads(line)
    if not r.get("impl", "").startswith(("kc_", "probe")):
        continue
    c = r.get("config", "")
    c = c if isinstance(c, str) else ",".join(map(str, c.values()))
    ratio = r.get("vs_sdpa", r.get("vs_eager", r.get("vs_flash")))
    print(r["seq"], r["head_dim"], int(r.get("causal", False)), r["impl"], r.get("alt", ""),
          c.ljust(18), f"{r['ms']:.4f}" if "ms" in r else "",
          f"{ratio:.3f}" if ratio is not None else "", r.get("ok", ""), r.get("n_regs", ""),
          r.get("n_spills", ""), r.get("error", "")[:150])
