"""Human-readable output: the eval table and the bench summary (markdown)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from kernelcraft.problem import geomean

FAST_P = (0.0, 1.0, 1.5, 2.0)


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.4f}" if v < 0.1 else f"{v:.3f}"


def _x(v: float | None) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.2f}x"


def worst_error(verdict: dict[str, Any]) -> tuple[float, float] | None:
    trials = [t for t in verdict.get("trials", []) if t.get("tol_rel")]
    if not trials:
        return None
    t = max(trials, key=lambda t: t["rel_l2"] / t["tol_rel"])
    return t["rel_l2"], t["tol_rel"]


def eval_table(res: Any) -> Table:
    """The table ``kernelcraft eval`` prints for one JudgeResult."""
    table = Table(title=f"{res.candidate} vs {res.ref}", caption=res.mode_note)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("correct", "yes" if res.correct else f"NO ({res.reason})")
    table.add_row("precision", res.precision)
    err = worst_error(res.verdict)
    if err:
        table.add_row("worst rel. L2 error / tolerance", f"{err[0]:.2e} / {err[1]:.2e}")
    trials = res.verdict.get("trials", [])
    if trials:
        table.add_row("trials passed", f"{sum(t['ok'] for t in trials)} / {len(trials)}")
    if res.timing:
        table.add_row("candidate ms (median)", _ms(res.ms("candidate")))
        table.add_row("eager ms", _ms(res.ms("eager")))
        table.add_row("torch.compile ms", _ms(res.ms("compile")) if res.ms("compile") else
                      f"failed: {res.compile_error}" if res.compile_error else "-")
        table.add_row("speedup vs eager", _x(res.speedup_eager))
        table.add_row("speedup vs torch.compile", _x(res.speedup_compile))
        pct = res.roofline.get("pct")
        if pct is not None:
            table.add_row(f"roofline ({res.roofline.get('bound')}-bound, {res.roofline['target']})",
                          f"{pct:.0f}%")
    for flag in res.flags:
        table.add_row("FLAG", flag)
    return table


def fast_p(rows: Sequence[dict[str, Any]], key: str, p: float) -> float:
    """Share of all problems that are correct and faster than the baseline by more than p."""
    if not rows:
        return float("nan")
    hits = 0
    for r in rows:
        if not r.get("correct"):
            continue
        if p == 0.0:
            hits += 1
        elif (r.get(key) or 0.0) > p:
            hits += 1
    return hits / len(rows)


def roofline_pct(row: dict[str, Any]) -> float | None:
    """A row's % of the roofline, its memory floor taken at the bandwidth of the GPU it was
    timed on: rows without the roofline's product were held to the ceilings of the
    target's default product (sm_90: the H200's 4.25 TB/s) whichever GPU ran them."""
    from kernelcraft.target import match_device

    roof = row.get("roofline") or {}
    pct, env = roof.get("pct"), row.get("env") or {}
    if pct is None or roof.get("product") or not env.get("gpu") or not roof.get("target"):
        return pct
    dev = match_device(env["gpu"], roof["target"], env.get("sms"))
    ms = (row.get("timing") or {}).get("candidate", {}).get("median_ms")
    if dev is None or not ms or dev.bandwidth() == roof.get("bandwidth"):
        return pct
    mem_ms = roof["bytes"] / dev.bandwidth() * 1e3
    flop_ms = roof["flops"] / roof["peak_flops"] * 1e3 if roof.get("flops") else 0.0
    return max(mem_ms, flop_ms) / ms * 100


def bench_markdown(rows: Sequence[dict[str, Any]], header: dict[str, Any],
                   extra: dict[str, Any] | None = None) -> str:
    """The markdown summary of a bench run: per-problem table, then fast_p and geomeans.

    ``extra`` maps further column names to functions of a row.
    """
    extra = extra or {}
    timed = any(r.get("timing") for r in rows)
    lines = [f"# kernelcraft bench: {header.get('name', '')}", ""]
    for key in ("date", "device", "gpu", "precision", "torch", "triton", "command"):
        if header.get(key) is not None:
            lines.append(f"- {key}: `{header[key]}`")
    if not timed:
        lines.append("- correctness only (no GPU: Triton interpreter at reduced sizes)")
    lines.append("")
    cols = ["problem", "correct", "reason"]
    if timed:
        cols += ["ms", "eager ms", "compile ms", "vs eager", "vs compile", "roofline %"]
    cols += list(extra)
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for r in sorted(rows, key=lambda r: r["name"]):
        reason = r.get("reason") or ("GPU fault, not measured" if r.get("gpu_fault") else "")
        cells = [r["name"], "yes" if r.get("correct") else "no", reason]
        if timed:
            t = r.get("timing", {})
            pct = roofline_pct(r)
            cells += [
                _ms(t.get("candidate", {}).get("median_ms")),
                _ms(t.get("eager", {}).get("median_ms")),
                _ms(t.get("compile", {}).get("median_ms")),
                _x(r.get("speedup_eager")),
                _x(r.get("speedup_compile")),
                "-" if pct is None else f"{pct:.0f}",
            ]
        cells += [fn(r) for fn in extra.values()]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines.append("")
    lines.append("| metric | vs eager | vs torch.compile |")
    lines.append("|---|---|---|")
    for p in FAST_P if timed else (0.0,):
        name = "correct (fast_0)" if p == 0 else f"fast_{p:g}"
        lines.append(f"| {name} | {fast_p(rows, 'speedup_eager', p):.2f} | "
                     f"{fast_p(rows, 'speedup_compile', p):.2f} |")
    if timed:
        ge = geomean([r["speedup_eager"] for r in rows if r.get("correct")
                      and r.get("speedup_eager")])
        gc = geomean([r["speedup_compile"] for r in rows if r.get("correct")
                      and r.get("speedup_compile")])
        lines.append(f"| geomean speedup (correct only) | {_x(ge)} | {_x(gc)} |")
    lines.append("")
    faults = sum(1 for r in rows if r.get("gpu_fault") and not r.get("correct"))
    lines.append(f"{sum(1 for r in rows if r.get('correct'))} of {len(rows)} correct"
                 + (f"; {faults} not measured: the GPU failed the judge (out of memory while "
                    "shared, or a lost context), not the candidate." if faults else "."))
    flagged = [r for r in rows if r.get("flags")]
    for r in flagged:
        lines.append(f"- FLAG {r['name']}: {'; '.join(r['flags'])}")
    return "\n".join(lines) + "\n"


def generate_report(gen: Any, opts: Any) -> str:
    """report.md of ``kernelcraft generate``: groups, templates, configs, judge verdict."""
    lines = [f"<!-- kernelcraft report -->\n# {gen.problem.name}", ""]
    lines.append(f"- targets: {', '.join(f'{t.arch} ({t.product})' for t in gen.targets)}")
    lines.append(f"- precision mode: {opts.precision}")
    lines.append(f"- module: `{gen.module_path.name}` ({len(gen.kernels)} generated kernels, "
                 f"{sum(1 for g in gen.plan.groups if g.kind == 'extern')} extern ops)")
    for v in getattr(gen, "variants", []):
        if v.guard:
            names = [a[0] for a in v.cap.user_args]
            dims = ", ".join(f"`{names[i]}` dim {d} = {n}" for i, d, n in v.guard)
            lines.append(f"- specialised ({v.label}): the program makes a constant of {dims} "
                         "(torch.export baked it in); other sizes there run the problem's "
                         "own forward")
    lines.append("")
    lines.append("## Groups")
    lines.append("")
    lines.append("| group | kind | ops | config / reason |")
    lines.append("|---|---|---|---|")
    for g in gen.plan.groups:
        if g.kind == "glue":
            continue
        k = gen.kernels.get(g.id)
        detail = ", ".join(f"{a}={b}" for a, b in k.config.items()
                           if not isinstance(b, dict)) if k else g.reason
        if k and k.notes[1:]:  # the first note is the template's one-line description
            detail += "; " + "; ".join(k.notes[1:])
        kind = g.kind if k or g.kind == "extern" else f"{g.kind} (extern)"
        lines.append(f"| {g.id} | {kind} | {g.describe()} | {detail} |")
    notes = getattr(gen.plan, "notes", [])
    if notes:  # patterns a template recognised but left alone, and why
        lines.append("")
        lines += [f"- planner: {n}" for n in notes]
    lines += tuning_lines(gen)
    if getattr(gen, "choices", None):
        lines.append("")
        lines.append("## Generated kernel or eager path (measured per group)")
        lines.append("")
        if getattr(gen, "choices_from_db", False):
            lines.append("From the tuning database: measured by an earlier run of this exact "
                         "module on this GPU (`--retune` measures again).")
            lines.append("")
        lines.append("| group | kernel ms | eager ms | kept |")
        lines.append("|---|---|---|---|")
        for c in gen.choices:
            label = "whole program" if c.group < 0 else c.group
            kernel = (f"failed: {c.failure}" if getattr(c, "failure", None)
                      else _ms(c.kernel_ms))
            lines.append(f"| {label} | {kernel} | {_ms(c.eager_ms)} | "
                         f"{'kernel' if c.kept else 'eager'} |")
    lines.append("")
    res = gen.judge
    lines.append("## Verification")
    lines.append("")
    if res is None:
        lines.append("Not judged (--no-judge).")
    else:
        lines.append(f"- {res.mode_note}")
        lines.append(f"- correct: {'yes' if res.correct else 'NO (' + str(res.reason) + ')'}")
        if res.detail:
            lines.append(f"- detail: {res.detail}")
        err = worst_error(res.verdict)
        if err:
            lines.append(f"- worst relative L2 error {err[0]:.2e} (tolerance {err[1]:.2e})")
        lines += [f"- judge: {n}" for n in res.verdict.get("notes", [])]
        if res.timing:
            lines.append(f"- time: {_ms(res.ms('candidate'))} ms; eager {_ms(res.ms('eager'))} "
                         f"ms ({_x(res.speedup_eager)}); torch.compile "
                         f"{_ms(res.ms('compile'))} ms ({_x(res.speedup_compile)})")
            pct = res.roofline.get("pct")
            if pct is not None:
                lines.append(f"- roofline: {pct:.0f}% ({res.roofline.get('bound')}-bound)")
    if getattr(gen, "builds", None):
        lines.append("")
        lines.append("## Cross-compilation")
        lines.append("")
        lines.append("| kernel | target | ok | registers | spills | shared/LDS bytes | "
                     "occupancy | note |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for b in gen.builds:
            occ = b.get("occupancy")
            lines.append(f"| {b['kernel']} | {b['target']} | {'yes' if b['ok'] else 'no'} | "
                         f"{b.get('registers', '-')} | {b.get('spills', '-')} | "
                         f"{b.get('shared', '-')} | {'-' if occ is None else f'{occ:.0%}'} | "
                         f"{b.get('note', '')} |")
    lines += launch_lines(getattr(gen, "launches", None) or [])
    return "\n".join(lines) + "\n"


def launch_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The launches of the full-size forward, compiled as Triton's launcher specialises
    them: one line per target, then every launch that failed or spills."""
    if not rows:
        return []
    lines = ["", "## Launches at full size", "",
             "The module's forward on the problem's full-size shapes (meta tensors, no GPU): "
             "every distinct launch compiled as the launcher specialises it (arguments equal "
             "to 1 as constants, divisibility by 16), split passes and combines included.", ""]
    from kernelcraft.build import UNRECORDED

    unrecorded = [r for r in rows if r["kernel"] == UNRECORDED]
    for arch in dict.fromkeys(r["target"] for r in rows):
        mine = [r for r in rows if r["target"] == arch]
        ok = sum(1 for r in mine if r.get("ok"))
        lines.append(f"- {arch}: " + next(
            (r["note"] for r in unrecorded if r["target"] == arch),
            f"{ok} of {len(mine)} launches compiled"))
    bad = [r for r in rows if r not in unrecorded and (not r.get("ok") or r.get("spills"))]
    if bad:
        lines += ["", "| kernel | target | ok | warps | spills | note |",
                  "|---|---|---|---|---|---|"]
        for r in bad:
            lines.append(f"| {r['kernel']} | {r['target']} | {'yes' if r.get('ok') else 'no'} | "
                         f"{r.get('num_warps', '-')} | {r.get('spills', '-')} | "
                         f"{r.get('note', '')} |")
    return lines


def tuning_lines(gen: Any) -> list[str]:
    """The tuning section: per group where its config came from and what it gained."""
    tunings = getattr(gen, "tunings", None) or []
    from_db = getattr(gen, "tuned_from_db", None) or {}
    if not tunings and not from_db:
        return ["", "## Tuning", "",
                "Not tuned: launch configs from the templates' heuristics (tuning measures on "
                "a GPU; earlier measurements in the tuning database are used on any machine)."]
    lines = ["", "## Tuning", ""]
    if tunings:
        lines.append("| group | family | target | source | configs measured | failed | "
                     "heuristic ms | tuned ms | gain | config |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for t in tunings:
            failed = ", ".join(f"{k} {v}" for k, v in sorted(t.failed.items())) or "-"
            gain = f"{t.speedup:.2f}x" if t.speedup else "-"
            cfg = ", ".join(f"{k}={v}" for k, v in (t.config or {}).items()) or "-"
            source = {"searched": f"measured ({t.stopped_because})",
                      "database": "database hit",
                      "untunable": f"heuristic kept ({t.stopped_because})"}.get(t.source,
                                                                                 t.source)
            lines.append(f"| {t.group} | {t.family} | {t.target} | {source} | {t.measured} | "
                         f"{failed} | {_ms(t.default_ms)} | {_ms(t.best_ms)} | {gain} | "
                         f"{cfg} |")
        if any(t.history for t in tunings):
            lines += ["", "Convergence (best latency after each measured config): "
                      "`tuning.png`."]
    for arch, n in sorted(from_db.items()):
        lines.append(f"- {arch}: {n} group(s) use configs measured earlier on that "
                     "architecture (tuning database)")
    return lines


def convergence_plot(gen: Any, path: Any) -> bool:
    """tuning.png: best-so-far latency against configs measured, one line per group."""
    tunings = [t for t in getattr(gen, "tunings", None) or [] if t.history]
    if not tunings:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for t in tunings:
        xs = [h[0] for h in t.history]
        ys = [h[1] / t.history[-1][1] for h in t.history]
        ax.step(xs, ys, where="post", label=f"g{t.group} {t.family}")
    ax.set_xlabel("configs measured")
    ax.set_ylabel("best latency / final best")
    ax.set_title(f"{gen.problem.name}: tuning convergence")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
