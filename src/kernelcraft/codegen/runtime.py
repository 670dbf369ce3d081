"""Python helpers the emitted module carries (its source is copied into kernel.py).

Kept free of kernelcraft imports so that the generated module needs only torch and triton.
"""

import math

import torch

_KC_MAX_RANK = 6


_KC_COALESCED = {}
_KC_TREESPECS = {}
#: flops per byte under which an fp32 matmul takes exact products (_kc_dot_precision): the
#: H200 streams 4.25 TB/s and does about 60 fp32 TFLOP/s without tensor cores
_KC_IEEE_INTENSITY = 6


def _kc_treespec(text):
    """The forward's output structure, parsed once (not on every call)."""
    spec = _KC_TREESPECS.get(text)
    if spec is None:
        spec = _KC_TREESPECS[text] = torch.utils._pytree.treespec_loads(text)
    return spec


def _kc_coalesce(sizes, strides_list, rank=_KC_MAX_RANK):
    """Merge dimensions every operand walks contiguously; pad in front to ``rank``.

    Returns (sizes, strides per operand, ndim), to be read, not changed: the result is
    kept per input (every forward of a model asks the same). Size-1 dimensions are dropped
    first.
    """
    key = (tuple(sizes), tuple(map(tuple, strides_list)), rank)
    hit = _KC_COALESCED.get(key)
    if hit is None:
        if len(_KC_COALESCED) > 4096:  # many shapes: start over rather than grow
            _KC_COALESCED.clear()
        hit = _KC_COALESCED[key] = _kc_coalesce_new(sizes, strides_list, rank)
    return hit


def _kc_coalesce_new(sizes, strides_list, rank):
    dims = [i for i, s in enumerate(sizes) if s != 1]
    out_sizes = []
    out_strides = [[] for _ in strides_list]
    for d in dims:
        pairs = zip(out_strides, strides_list, strict=True)
        if out_sizes and all(st[-1] == strides[d] * sizes[d] for st, strides in pairs):
            out_sizes[-1] *= sizes[d]
            for st, strides in zip(out_strides, strides_list, strict=True):
                st[-1] = strides[d]
        else:
            out_sizes.append(sizes[d])
            for st, strides in zip(out_strides, strides_list, strict=True):
                st.append(strides[d])
    if len(out_sizes) > rank:
        raise ValueError(f"kernelcraft: rank {len(out_sizes)} > {rank} after coalescing")
    ndim = len(out_sizes)
    pad = rank - ndim
    out_sizes = [1] * pad + out_sizes
    out_strides = [[0] * pad + st for st in out_strides]
    return out_sizes, out_strides, ndim



def _kc_interpreting():
    """Whether Triton runs kernels through its CPU interpreter (TRITON_INTERPRET=1)."""
    import os

    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


class _KcTable(dict):
    """A dict that counts its changes: launch plans cached under one count were made with
    the configs it held then (the tuner changes the table between calls)."""

    version = 0

    def __setitem__(self, key, value):
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self.version += 1
        super().__delitem__(key)

    def pop(self, *args):
        self.version += 1
        return super().pop(*args)

    def clear(self):
        self.version += 1
        super().clear()

    def update(self, *args, **kwargs):
        self.version += 1
        super().update(*args, **kwargs)


#: Tuned launch configs: (wrapper, arch, sizes) -> knobs. The emitted module fills it per
#: architecture (a dispatch table); sizes or GPUs not listed use the wrappers' heuristics.
_KC_TUNED = _KcTable()


def _kc_default_device():
    """Where a kernel with no tensor argument runs when its caller names no device."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _kc_signature(args):
    """What a wrapper's launch plan depends on: each tensor argument's shape, strides,
    dtype and device, each scalar, and the tuned table's version. Equal signatures, equal
    plans, so a wrapper pays for its index arithmetic once per signature, not per call."""
    key = [_KC_TUNED.version]
    for a in args:
        if isinstance(a, torch.Tensor):
            key += (a.shape, a.stride(), a.dtype, a.device)
        else:
            key.append(a)
    return tuple(key)


_KC_ARCH = {}
_KC_WARNED = set()


def _kc_arch(dev):
    """The architecture name of ``dev`` as kernelcraft's targets spell it (sm_90, gfx942)."""
    if dev.type != "cuda":
        return dev.type
    if dev not in _KC_ARCH:
        props = torch.cuda.get_device_properties(dev)
        if getattr(torch.version, "hip", None):
            _KC_ARCH[dev] = props.gcnArchName.split(":")[0]
        else:
            _KC_ARCH[dev] = f"sm_{props.major}{props.minor}"
    return _KC_ARCH[dev]


def _kc_tuned(name, dev, key):
    """The tuned knobs of wrapper ``name`` at these sizes on this GPU, or None."""
    if not _KC_TUNED:
        return None
    arch = _kc_arch(dev)
    cfg = _KC_TUNED.get((name, arch, tuple(key)))
    if (cfg is None and dev.type == "cuda" and arch not in _KC_WARNED
            and not any(k[1] == arch for k in _KC_TUNED)):
        import warnings

        _KC_WARNED.add(arch)
        tuned = sorted({k[1] for k in _KC_TUNED})
        warnings.warn(f"kernelcraft: no tuned configs for {arch} (tuned for "
                      f"{', '.join(tuned)}); using the default heuristics", stacklevel=2)
    return cfg


def _kc_dot_precision(t, table, M=None, N=None, K=None):
    """input_precision for fp32 dots on t's device: exact on the interpreter, else per arch.

    A matmul with sizes (M, N, K) that moves more bytes than its plain fp32 arithmetic can
    keep busy (under _KC_IEEE_INTENSITY flops per byte: a router's 8 columns, a matvec)
    takes exact fp32 products at no cost: emulated products round differently from torch's,
    and integer results downstream (top-k of router scores) flip on near-ties."""
    if t.device.type == "cpu":
        return "ieee"
    if M is not None and M * N * K:
        flops, nbytes = 2 * M * N * K, t.element_size() * (M * K + K * N + M * N)
        if flops < _KC_IEEE_INTENSITY * nbytes:
            return "ieee"
    if getattr(torch.version, "hip", None):
        return table.get("hip", "ieee")
    return table.get("cuda", "ieee")



def _kc_prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def _kc_pool_size(size, k, s, p, d, ceil):
    """Output positions of a pooling window along one dim, as PyTorch counts them."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:  # the last window must start inside
        out -= 1
    if out < 1:
        raise ValueError(f"kernelcraft: pooling window {k} (stride {s}, padding {p}, "
                         f"dilation {d}) does not fit an input of size {size}")
    return out


def _kc_arange_len(start, end, step):
    """The length of ``arange(start, end, step)`` as PyTorch computes it (in double)."""
    return max(0, math.ceil((end - start) / step))


def _kc_piece_strides(t, pshape, shape):
    """A cat's or a padding's source strides over the kernel's domain: 0 where the padded
    (concatenated) tensor is broadcast (size 1 there, or missing in front), as
    ``F.affine_grid``'s base grid pads [1, W, 1] and [H, 1, 1] rows and adds them."""
    lead = len(shape) - len(pshape)
    return [0] * lead + [0 if p == 1 and s != 1 else st
                         for st, p, s in zip(t.stride(), pshape, shape[lead:], strict=True)]


def _kc_piece_dims(shape, dims):
    """Elements inside each of ``dims`` of ``shape`` (row-major), then their sizes: a
    pointwise kernel takes its index on a cat's or a padding's dim from the linear index."""
    return [_kc_prod(shape[d + 1:]) for d in dims] + [shape[d] for d in dims]


def _kc_piece_modes(shape, dims, inner):
    """How a kernel finds its index on each of ``dims`` (a cat's or a padding's) with the
    domain coalesced to an innermost extent ``inner``: 1 the column itself (the dim is
    innermost and stands alone), 2 from the row (the dim lies outside the innermost
    extent: one division per tile row), 0 from the linear index (per element)."""
    pd = _kc_piece_dims(shape, dims)
    return [1 if within == 1 and size == inner else 2 if inner and within % inner == 0 else 0
            for within, size in zip(pd[:len(dims)], pd[len(dims):], strict=True)]


def _kc_magic(d):
    """(m, s) with n // d == (n * m) >> (32 + s - 16) for every 0 <= n < 2**31 (kernels
    divide by runtime sizes through ``_kc_udiv``): with l = ceil(log2 d),
    m = ceil(2**(31 + l) / d) < 2**32 and m * d - 2**(31 + l) < d <= 2**l, so the error
    never reaches the next integer. m is returned as the int32 of its bits."""
    if d <= 1:
        return 0, 16
    lg = (d - 1).bit_length()
    m = -(-(1 << (31 + lg)) // d)
    return (m - (1 << 32) if m >= 1 << 31 else m), lg - 1 + 16


def _kc_adaptive_window(i, o):
    """The widest window of an adaptive pool from ``i`` to ``o`` positions."""
    return max(((k + 1) * i + o - 1) // o - (k * i) // o for k in range(o))


def _kc_channels_last(x, lead):
    """Whether x's last leading dim (channels) is innermost in memory, below every spatial
    dim of more than one position."""
    st = [s for s, n in zip(x.stride()[lead:], x.shape[lead:], strict=True) if n > 1]
    return bool(st) and x.shape[lead - 1] > 1 and x.stride(lead - 1) < min(st)


def _kc_pool_strides(shape, lead, cl):
    """Dense strides of a pooling output: rows, or channels innermost when ``cl``."""
    dims = list(range(len(shape)))
    if cl:  # (leading..., spatial..., channels) from outermost to innermost
        dims = dims[:lead - 1] + dims[lead:] + [lead - 1]
    strides = [0] * len(shape)
    step = 1
    for d in reversed(dims):
        strides[d] = step
        step *= max(shape[d], 1)
    return strides


def _kc_far(views):
    """Whether an offset into any of these tensors, or a block's index past the end, can
    pass 2**31 (int64 index math); the margin covers the largest block."""
    lim = 2**31 - 2**20
    return any(v.numel() >= lim or sum(
        (n - 1) * abs(s) for n, s in zip(v.shape, v.stride(), strict=True)) >= lim
        for v in views)


def _kc_gather_view(src, first, k, gshape, domain, in_place=False):
    """``src`` over the domain for a gather of its dims first .. first + k - 1: its own
    strides on the other dims, 0 on the gathered ones (the kernel adds index * stride),
    aligned to the right and broadcast as the gather's result is. ``in_place``: the index
    tensor has src's rank and takes the gathered dim's place (``aten.gather``)."""
    if in_place:
        st = list(src.stride())
        st[first] = 0
    else:
        nb = len(gshape) - (src.dim() - k)  # dims the broadcast indices take
        st = list(src.stride()[:first]) + [0] * nb + list(src.stride()[first + k:])
    st = [0] * (len(domain) - len(st)) + st
    sh = [1] * (len(domain) - len(gshape)) + list(gshape)
    st = [0 if a == 1 and b != 1 else s for a, b, s in zip(sh, domain, st, strict=True)]
    return torch.as_strided(src, tuple(domain), st, src.storage_offset())


def _kc_scan_config(K, R, inner, cpu):
    """(BLOCK_K, BLOCK_R, num_warps) of a scan over K rows of length R: long chunks when
    the scanned dim is innermost in memory, rows side by side when it is not, and rows
    split finely enough that about a thousand programs run (each walks its rows alone)."""
    p2 = _kc_next_pow2
    if cpu:  # the interpreter: few large programs
        return min(p2(K), 64), min(p2(R), 512), 4
    if inner:
        br = min(p2(R), 1024)
        bk = max(1, min(p2(K), 2048 // br))
        while bk > 1 and K / bk < 1024:
            bk //= 2
        return bk, br, max(1, min(8, bk * br // 256))
    # side by side: 16 rows (64 contiguous bytes) by 32-long chunks on one warp measured
    # best on the H200 (8192x8192 along dim 0: 1.4x faster than 8 rows on 1-4 warps)
    bk = min(p2(K), 16)
    br = max(8, min(p2(R), 512 // bk))
    while bk > 8 and K / bk < 512:
        bk //= 2
    return bk, br, max(1, min(8, bk * br // 512))


def _kc_topk_config(K, R, KP, inner, cpu):
    """(BLOCK_K, BLOCK_R, num_warps) of a top-k over K rows of length R keeping KP keys a
    row: the scan's layout rules, with the rows' key buffers (BLOCK_K x KP 64-bit keys)
    counted in the tile. Each key entering the buffer costs a pass over the chunk, and
    about KP * (1 + ln(R / BLOCK_R)) enter, so a large k takes short chunks (rows side by
    side keep the tile full). From 16 keys a row on, one warp per row measured best on the
    H100 (its reductions stay in the warp's shuffles): 8192 rows of 1000, k = 40, 0.26 ms
    against 0.97 ms for 8 rows x 128 on 4 warps; 4 warps where too few rows fill the GPU."""
    p2 = _kc_next_pow2
    if cpu:
        return min(p2(K), 16), min(p2(R), 512), 4
    if inner and KP >= 16:
        return 1, (p2(R) if p2(R) <= 1024 else 512), (1 if K >= 1024 else 4)
    if inner:
        br = min(p2(R), 1024, max(64, 8192 // KP))
        bk = max(1, min(p2(K), 2048 // max(br, KP)))
        while bk > 1 and K / bk < 1024:
            bk //= 2
    else:
        bk = min(p2(K), 16, max(1, 2048 // KP))
        br = max(8, min(p2(R), 512 // bk))
        while bk > 8 and K / bk < 512:
            bk //= 2
    return bk, br, max(1, min(8, bk * max(br, KP) // 256))


def _kc_reshape(x, cin, chint, cout, sym):
    """View ``x`` as the captured view did, with sizes re-derived from x's actual sizes.

    ``cin``/``chint`` are the input and output sizes the program was captured with, ``cout``
    the output sizes as the program computes them now (exact for symbolic dims, flagged in
    ``sym``; captured constants otherwise). Dimensions are matched in chunks of equal
    captured products: a merge takes the product of x's dims, a split keeps its symbolic
    parts and lets its largest constant part absorb any change. So a view written for one
    hidden size still serves a model built with another.
    """
    act = list(x.shape)
    if list(cin) == act:
        return x.reshape(list(cout))
    out = []
    i = j = 0
    while i < len(cin) or j < len(chint):
        ins, outs = [], []
        pi = po = 1
        while True:
            if pi <= po and i < len(cin):
                ins.append(i)
                pi *= cin[i]
                i += 1
            elif j < len(chint):
                outs.append(j)
                po *= chint[j]
                j += 1
            else:
                break
            if pi == po and (i >= len(cin) or cin[i] != 1) and (j >= len(chint) or chint[j] != 1):
                break
        total = _kc_prod(act[k] for k in ins)
        if len(outs) == 1:
            out.append(cout[outs[0]] if sym[outs[0]] else total)
        elif outs:
            sizes = [cout[k] for k in outs]
            fixed = [k for k in range(len(outs)) if not sym[outs[k]]]
            if fixed:
                # a -1 (inferred) size absorbs the change; else the largest constant
                free = sizes.index(-1) if -1 in sizes else max(fixed, key=lambda k: sizes[k])
                rest = _kc_prod(s for k, s in enumerate(sizes) if k != free)
                sizes[free] = total // max(rest, 1)
            out.extend(sizes)
    return x.reshape(out)


def _kc_state(module, fqn):
    """A parameter or buffer by dotted name, read on every forward. ``get_parameter`` walks
    and checks the path each call (about 10 us); here the owning submodule is found once per
    model and name, and the attribute read each call, so a moved, reloaded or replaced
    tensor is still the one seen."""
    owners = module.__dict__.get("_kc_owners")
    if owners is None:
        owners = module.__dict__["_kc_owners"] = {}
    hit = owners.get(fqn)
    if hit is None:
        path, _, name = fqn.rpartition(".")
        hit = owners[fqn] = (module.get_submodule(path) if path else module, name)
    return getattr(hit[0], hit[1])


def _kc_const(module, fqn, dev):
    """A plain tensor attribute (not a parameter or buffer) on the inputs' device:
    ``module.to(device)`` leaves such a tensor where it was made, and programs move it in
    ``forward`` (``self.h0 = self.h0.to(x.device)``). The moved copy is kept per model and
    name while the attribute is the same tensor; the attribute itself is left alone."""
    t = _kc_state(module, fqn)
    if t.device == dev:
        return t
    moved = module.__dict__.setdefault("_kc_moved", {})
    hit = moved.get(fqn)
    if hit is None or hit[0] is not t or hit[1].device != dev:
        hit = moved[fqn] = (t, t.to(dev))
    return hit[1]


def _kc_lifted(module, name, dev, make):
    """A tensor ``forward`` builds from Python data (``torch.tensor(finfo.min)``), rebuilt
    from the literal the capture read (``make``) once per model and device."""
    made = module.__dict__.setdefault("_kc_lifted", {})
    t = made.get((name, dev))
    if t is None:
        t = made[(name, dev)] = make().to(dev)
    return t


def _kc_broadcast(*shapes):
    """torch.broadcast_shapes on plain sizes without its dispatch: a wrapper runs on every
    call, and that one cost tens of microseconds (launch-bound modules felt it)."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        off = rank - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if d != 1:
                if o != 1 and o != d:
                    raise RuntimeError(f"kernelcraft: shapes {[tuple(x) for x in shapes]} "
                                       "do not broadcast")
                out[off + i] = d
    return torch.Size(out)


def _kc_row_domain(shapes, rank):
    """The domain of a reduction group: its full-context inputs broadcast, padded to rank."""
    shape = list(_kc_broadcast(*shapes))
    return [1] * (rank - len(shape)) + shape


def _kc_unsqueeze_dims(x, dims):
    """A reduced value without its reduced dims, viewed with them back (size 1)."""
    for d in sorted(dims):
        x = x.unsqueeze(d)
    return x


def _kc_split_coalesce(shape, rdims, full_views, reduced_views, krank=_KC_MAX_RANK,
                       rrank=_KC_MAX_RANK):
    """Kept and reduced dims of a reduction domain, each coalesced among themselves and
    padded in front to ``krank`` and ``rrank`` dims (the kernel's parameters).

    Every view has the domain's rank; reduced views have size 1 on ``rdims``. Returns
    (kept sizes, kept strides per view, kept ndim, reduced sizes, reduced strides per full
    view, reduced ndim); kept strides list the full views first.
    """
    kd = [d for d in range(len(shape)) if d not in rdims]
    rd = sorted(rdims)
    views = list(full_views) + list(reduced_views)
    ksz, kst, kdim = _kc_coalesce([shape[d] for d in kd],
                                  [[v.stride(d) for d in kd] for v in views], krank)
    rsz, rst, rdim = _kc_coalesce([shape[d] for d in rd],
                                  [[v.stride(d) for d in rd] for v in full_views], rrank)
    return ksz, kst, kdim, rsz, rst, rdim


def _kc_next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def _kc_row_config(K, R, kst, kdim, rst, rdim, cpu, policy):
    """(BLOCK_K, BLOCK_R, num_warps) of the row reduction template for these sizes.

    A reduced extent that fits one tile (BLOCK_R >= R) is kept in registers (loaded once).
    """
    r2 = _kc_next_pow2(max(R, 1))
    k2 = _kc_next_pow2(max(K, 1))
    if cpu:
        br = min(r2, policy["CPU_BLOCK_R"])
        bk = max(1, min(k2, policy["CPU_TILE"] // br))
        return bk, br, 4
    # rows side by side when the first strided full operand walks the kept dims fastest
    columns = False
    for ks, rs in zip(kst, rst, strict=False):
        if any(ks) or any(rs):
            k_inner = ks[-1] if kdim else None
            r_inner = rs[-1] if rdim else None
            columns = k_inner == 1 and r_inner != 1
            break
    persist = policy["GPU_PERSIST_TILE"]
    arg = policy.get("ARG_TILE", 0)
    if arg and not columns:  # a one-pass arg reduction: small chunks, looped
        br = min(r2, arg)
        bk = max(1, min(k2, arg // br))
        return bk, br, 4
    if columns:
        bk = max(1, min(k2, policy["GPU_BLOCK_K_COLUMNS"]))
        if r2 > policy["GPU_COLUMNS_SHORT_R"] and policy.get("PASSES", 1) == 1 and not arg:
            # one pass, no arg lanes: 4096-element tiles on 4 warps, in chunks of 64 rows
            # (128 resident), fewer columns a program where they would fill too few programs
            # (H100: a masked mean over 1024 of 1024 features 0.107 ms at 64 x 64 against
            # 0.128 at 8 x 1024 resident, a column sum of 4096 x 16384 0.104 at 16 x 64
            # against 0.144 at 64 x 64 on 8 warps; a softmax over dim 1 kept resident reads
            # its rows once: 0.228 against 0.393 looped)
            chunk = policy["GPU_COLUMNS_CHUNK_R"]
            br = r2 if r2 <= 2 * chunk else chunk
            bk = max(1, min(k2, policy["GPU_TILE"] // br))
            while bk > 16 and -(-K // bk) < policy["GPU_COLUMNS_PROGRAMS"]:
                bk //= 2
            return bk, br, 4
        if r2 * min(bk, policy["GPU_BLOCK_K_COLUMNS_MIN"]) <= persist:
            br = r2  # a short reduced extent (RGB channels): more rows fill the tile
            bk = max(1, min(k2, max(bk, policy["GPU_TILE"] // br), persist // br))
        else:
            br = max(1, min(r2, policy["GPU_TILE"] // bk))
    elif r2 <= persist:
        br = r2
        bk = max(1, min(k2, policy["GPU_TILE"] // br))
    else:
        br = policy["GPU_BLOCK_R"]
        bk = 1
    # 16 elements per thread along a long row (measured faster than 32 on the H200, where
    # a resident 16384-element row at 16 warps took 0.43 ms against 0.37 in 8192 chunks)
    warps = 16 if br >= 8192 else 8 if bk * br >= 4096 else 4 if bk * br >= 1024 else 2
    if br < R and bk == 1 and policy.get("VAR", 0) and policy["LANES"] >= 3 and br >= 8192:
        # a variance (mean and M2 lanes) and one more lane: 8 elements per thread. On the
        # H100 group norm 0.59 ms against 0.80 in 8192 chunks, instance norm 0.58 / 0.74;
        # three plain lanes (label-smoothed cross entropy) keep 8192: 0.35 against 0.51
        br //= 2
    if br < R and bk == 1 and policy.get("ONLINE", 0) and br > policy["ONLINE_BLOCK_R"]:
        # an online softmax (a running maximum and a sum per lane, beside the maximum's own
        # lanes): 4 elements per thread. H100, 16384-wide rows: logsumexp 0.194 ms in 2048
        # chunks at 16 warps against 0.385 in 8192 (0.221 in two passes), label-smoothed
        # cross entropy 0.129 against 0.240 (0.162 in passes)
        br, warps = policy["ONLINE_BLOCK_R"], 16
    return bk, br, warps


_KC_SMS = {}


def _kc_sms(dev):
    """The device's multiprocessor count, asked once."""
    if dev not in _KC_SMS:
        _KC_SMS[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    return _KC_SMS[dev]


def _kc_row_split(K, R, bk, br, dev, policy):
    """(split, rchunk): how many programs share each row's R, and the R extent of each."""
    if br >= R:
        return 1, R
    if dev.type == "cpu":
        return _kc_row_split_on(K, R, bk, br, policy["CPU_SMS"], False, policy)
    return _kc_row_split_on(K, R, bk, br, _kc_sms(dev), True, policy)


def _kc_split_tile(K, R, bk, br, warps, dev, policy):
    """(BLOCK_K, BLOCK_R, num_warps) once R is split over programs (few rows, see
    _kc_split_tile_on); unchanged in the interpreter."""
    if dev.type == "cpu" or br >= R:
        return bk, br, warps
    return _kc_split_tile_on(K, R, bk, br, warps, _kc_sms(dev), policy)


def _kc_split_tile_on(K, R, bk, br, warps, sms, policy):
    """Few long rows split over programs (``_kc_row_split_on`` splits them): chunks short
    enough for the split to reach ``SPLIT_WAVES`` programs per SM, 4 elements per thread
    (16 at 8192 and 16 warps). H100, a mean over 2M box pairs (eight strided loads an
    element): a config sweep through the tuned table gave 0.078 ms in 256 programs of 8192,
    0.038 in 512 of 2048 at 16 warps (0.052 at 4 warps); the module with this rule measured
    0.085 against 0.088 in a later A/B, so the sweep's gain is not yet confirmed."""
    if bk != 1 or _kc_row_split_on(K, R, bk, br, sms, True, policy)[0] == 1:
        return bk, br, warps
    want = policy["SPLIT_WAVES"] * sms
    while br > 1024 and K * -(-R // br) < want:
        br //= 2
    return bk, br, max(4, min(16, br // 128))


def _kc_row_split_on(K, R, bk, br, sms, gpu, policy):
    """_kc_row_split for ``sms`` multiprocessors; on a GPU short rows stay whole (a second
    launch costs more host time than the split saves), the interpreter splits them too (the
    path stays tested)."""
    if br >= R or (gpu and R < policy.get("SPLIT_MIN_R", 0)):
        return 1, R
    want = policy["SPLIT_WAVES"] * sms
    rows = -(-K // bk)
    if 2 * rows >= want:
        return 1, R
    chunks = -(-R // br)
    split = max(1, min(chunks, -(-want // rows), policy["MAX_SPLIT"]))
    rchunk = -(-chunks // split) * br
    return -(-R // rchunk), rchunk


def _kc_row_split_n(R, br, n):
    """(split, rchunk) for a requested number of programs per row (tuned)."""
    chunks = -(-R // br)
    n = max(1, min(n, chunks))
    rchunk = -(-chunks // n) * br
    return -(-R // rchunk), rchunk


def _kc_key(args, kwargs):
    """A stable key of constructor arguments: sizes and flags, tensors by shape and dtype."""

    def norm(v):
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype))
        if isinstance(v, (list, tuple)):
            return tuple(norm(x) for x in v)
        if isinstance(v, dict):
            return tuple(sorted((k, norm(x)) for k, x in v.items()))
        return v

    return repr((norm(list(args)), norm(dict(kwargs))))


def _kc_tile(numel, inner, block, columns=None):
    """(columns, rows) of a pointwise program's tile over a domain whose innermost dim has
    ``inner`` elements: the widest power-of-two column block up to ``block`` that wastes
    at most 15% of a row's lanes (a 3136-wide row takes 512: 7 blocks, 87.5% used), but
    at least 64 wide (short rows keep whole cache lines per row); rows fill the rest.
    ``columns``: a tuned column block (narrower tiles give each thread several rows, so a
    value of the column alone is computed once for them)."""
    xb = min(block, 1 << max(0, inner - 1).bit_length())
    if columns:
        xb = min(xb, columns)
    floor = min(xb, 64)
    while not columns and xb > floor and inner < 0.85 * (-(-inner // xb) * xb):
        xb //= 2
    rows = numel // inner
    yb = max(1, min(block // xb, 1 << max(0, rows - 1).bit_length()))
    return xb, yb
