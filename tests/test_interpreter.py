"""The interpreter's block-wise reductions and scans (``kernelcraft.measure.interpreter``)
give what the combine functions define: a NaN-first, lowest-index arg max, a product, a
running maximum with its index (a scan whose combine is not commutative) and a log-add-exp
scan, against PyTorch in float64. Run in a TRITON_INTERPRET=1 subprocess (the setting
would change how other tests' modules launch)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import torch, triton, triton.language as tl
    from kernelcraft.measure.interpreter import install

    @triton.jit
    def _argmax(v1, i1, v2, i2):
        n1 = v1 != v1
        n2 = v2 != v2
        first = ((n1 & ~n2) | (n1 & n2 & (i1 < i2))
                 | (~n1 & ~n2 & ((v1 > v2) | ((v1 == v2) & (i1 < i2)))))
        return tl.where(first, v1, v2), tl.where(first, i1, i2)

    @triton.jit
    def _mul(a, b):
        return a * b

    @triton.jit
    def _running_max(v1, i1, v2, i2):
        later = v2 >= v1
        return tl.where(later, v2, v1), tl.where(later, i2, i1)

    @triton.jit
    def _logaddexp(a, b):
        m = tl.maximum(a, b)
        return tl.where(m == float("-inf"), m, m + tl.log(tl.exp(a - m) + tl.exp(b - m)))

    @triton.jit
    def k(x, ov, oi, op, cm, ci, ls, R: tl.constexpr, BR: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BR)
        m = c < R
        v = tl.load(x + r * R + c, mask=m, other=float("-inf"))
        bv, bi = tl.reduce((v, c), 0, _argmax)
        tl.store(ov + r, bv)
        tl.store(oi + r, bi)
        tl.store(op + r, tl.reduce(tl.where(m, 1.0 + 0.01 * v, 1.0), 0, _mul))
        rv, ri = tl.associative_scan((v, c), 0, _running_max)
        tl.store(cm + r * R + c, rv, mask=m)
        tl.store(ci + r * R + c, ri, mask=m)
        tl.store(ls + r * R + c, tl.associative_scan(v, 0, _logaddexp, reverse=True), mask=m)

    assert install()
    torch.manual_seed(0)
    K, R = 6, 1000
    x = torch.randn(K, R)
    x[1, 5] = x[1, 700] = float("nan")  # the first NaN wins
    x[2] = 0.5  # all tied: the first index
    x[3, 17] = x[3, 900] = 9.0
    x[4] = torch.randint(0, 3, (R,)).float()  # ties in the running maximum
    ov, op = torch.empty(K), torch.empty(K)
    oi = torch.empty(K, dtype=torch.int32)
    cm, ls = torch.empty(K, R), torch.empty(K, R)
    ci = torch.empty(K, R, dtype=torch.int32)
    k[(K,)](x, ov, oi, op, cm, ci, ls, R=R, BR=1024)

    xd = x.double()
    nan = xd.isnan()
    ref_i = torch.where(nan.any(1), nan.double().argmax(1), xd.nan_to_num(-1e9).argmax(1))
    assert oi.tolist() == ref_i.tolist(), (oi, ref_i)
    assert ov[1].isnan() and ov[3] == 9.0 and ov[2] == 0.5
    prod = (1 + 0.01 * xd).prod(1)
    ok = ~prod.isnan()
    assert torch.allclose(op.double()[ok], prod[ok], rtol=1e-4), (op, prod)
    rows = [0, 2, 3, 4]  # no NaN
    ref_m, ref_mi = torch.cummax(xd[rows], 1)
    assert torch.equal(cm[rows].double(), ref_m)
    # ties go to the later index (the combine's v2 >= v1), as torch.cummax does
    assert torch.equal(ci[rows].long(), ref_mi)
    ref_ls = torch.logcumsumexp(xd[rows].flip(1), 1).flip(1)
    assert torch.allclose(ls[rows].double(), ref_ls, atol=1e-4), (ls[rows] - ref_ls).abs().max()
    print("ok")
''')


def test_block_reductions_and_scans_follow_their_combine_functions(tmp_path):
    script = tmp_path / "interp.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TRITON_INTERPRET="1")
    res = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0 and "ok" in res.stdout, res.stdout + res.stderr
