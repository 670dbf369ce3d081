"""Command line: ``kernelcraft eval | bench | targets``.

Exit codes: 0 success (candidate correct), 1 candidate rejected, 2 unusable input,
3 internal error. Errors are one line; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from rich.console import Console

from kernelcraft.errors import InputError

EXIT_OK, EXIT_REJECTED, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=["cuda", "cpu"], default=None,
                   help="where to judge (default: cuda when a GPU is present, else cpu)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16", "fp16"],
                   help="precision mode; baselines run in the same mode (default: strict fp32)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="seconds before a candidate counts as hung (default 600)")
    p.add_argument("--sets", type=int, default=5, help="fresh input sets (default 5, minimum 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", default=None,
                   help="target for the roofline (default: the detected GPU)")
    p.add_argument("--no-compile", action="store_true",
                   help="skip the torch.compile baseline")
    p.add_argument("--allow-torch-outputs", action="store_true",
                   help="accept outputs computed by PyTorch ops after the Triton kernels "
                        "(by default every output must be memory a Triton kernel was given)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelcraft",
        description="Verified, tuned GPU kernels for PyTorch programs.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    # also after the command (``kernelcraft generate ... --debug``), as the error hint says
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="cmd", required=True)

    ev = sub.add_parser("eval", parents=[debug],
                        help="judge a candidate (ModelNew) against a problem (Model)")
    ev.add_argument("candidate", type=Path)
    ev.add_argument("--ref", type=Path, required=True, help="the problem file")
    ev.add_argument("--json", type=Path, default=None, help="write the full result here")
    _judge_args(ev)

    be = sub.add_parser("bench", parents=[debug],
                        help="judge every problem/candidate pair of a tree")
    be.add_argument("root", type=Path,
                    help="problems directory (or a directory with problems/ and candidates/)")
    be.add_argument("--candidates", type=Path, default=None,
                    help="candidates tree matched to the problems by relative path")
    be.add_argument("--out", type=Path, default=None,
                    help="output directory (default: ROOT/bench-out)")
    be.add_argument("--workers", type=int, default=None,
                    help="parallel judges (default: one per GPU; on CPU up to 4)")
    be.add_argument("--fresh", action="store_true", help="ignore earlier results in --out")
    _judge_args(be)

    ge = sub.add_parser("generate", parents=[debug],
                        help="PyTorch problem -> fused Triton kernels (ModelNew)")
    ge.add_argument("problem", type=Path)
    ge.add_argument("--target", default="sm_90",
                    help="one or several targets, comma-separated (arch or product names)")
    ge.add_argument("-o", "--out", type=Path, default=Path("out"),
                    help="output directory; the module goes to OUT/<problem>/kernel.py")
    ge.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16", "fp16"])
    ge.add_argument("--device", choices=["cuda", "cpu"], default=None,
                    help="where the judge checks the result (default: cuda when present)")
    ge.add_argument("--no-judge", action="store_true", help="skip the judge")
    ge.add_argument("--no-build", action="store_true", help="skip cross-compilation")
    ge.add_argument("--timeout", type=float, default=900.0, metavar="S")
    ge.add_argument("--no-tune", action="store_true",
                    help="no tuning: the templates' heuristics (database hits still apply)")
    ge.add_argument("--effort", default="default", choices=["quick", "default", "full"],
                    help="tuning effort per kernel group (configs measured, wall time)")
    ge.add_argument("--budget", default=None, metavar="TIME",
                    help="tuning wall time for the whole program, e.g. 90s, 5m")
    ge.add_argument("--strategy", default="evolutionary", choices=["evolutionary", "random"])
    ge.add_argument("--retune", action="store_true",
                    help="search (and time kernel vs eager) even where the tuning database "
                         "has a result")
    ge.add_argument("--no-cache", action="store_true",
                    help="generate again even if the database holds a module for the same "
                         "problem, options, GPU, toolchain and measurements")
    ge.add_argument("--conv-template", nargs="?", const="always", default="auto",
                    choices=["auto", "always", "never"],
                    help="convolutions (1-D to 3-D, grouped, transposed) through "
                         "kernelcraft's implicit-GEMM template, with the pointwise ops after "
                         "them fused: auto (default: all but 1x1 layers over NCHW inputs and "
                         "strided transposed layers, where cuDNN measured faster), always "
                         "(the bare flag), never (cuDNN/MIOpen)")
    ge.add_argument("--db", type=Path, default=None,
                    help="tuning database (default: $KERNELCRAFT_DB or the cache directory)")

    tg = sub.add_parser("targets", parents=[debug], help="list the targets kernelcraft knows")
    tg.add_argument("--json", action="store_true")
    tg.add_argument("names", nargs="*", help="targets to show (arch or product names)")

    db = sub.add_parser("db", parents=[debug],
                        help="inspect, export and import the tuning database")
    dbs = db.add_subparsers(dest="db_cmd", required=True)
    db_help = "database file (default: $KERNELCRAFT_DB, else tuning.db in the cache directory)"
    dls = dbs.add_parser("ls", help="list workloads with their record counts and best latency")
    dls.add_argument("--db", type=Path, default=None, help=db_help)
    dsh = dbs.add_parser("show", help="one workload and its records, fastest first")
    dsh.add_argument("key", metavar="KEY_PREFIX", help="workload key or a unique prefix of it")
    dsh.add_argument("--db", type=Path, default=None, help=db_help)
    dsh.add_argument("--limit", type=int, default=20, metavar="N",
                     help="records to show (default 20; 0 shows all)")
    dex = dbs.add_parser("export", help="write records as JSON lines")
    dex.add_argument("out", type=Path, metavar="OUT.jsonl")
    dex.add_argument("--db", type=Path, default=None, help=db_help)
    dex.add_argument("--workload", default=None, metavar="KEY",
                     help="only this workload (key or unique prefix)")
    dim = dbs.add_parser("import", help="add the records of an exported JSON lines file")
    dim.add_argument("src", type=Path, metavar="IN.jsonl")
    dim.add_argument("--db", type=Path, default=None, help=db_help)
    return parser


def _opts(args: argparse.Namespace):
    from kernelcraft.measure.judge import JudgeOptions

    if args.sets < 5:
        raise InputError("--sets must be at least 5 (the judge needs 5 fresh input sets)")
    return JudgeOptions(
        device=args.device, precision=args.precision, n_sets=args.sets, seed=args.seed,
        timeout_s=args.timeout, compile_baseline=not args.no_compile, target=args.target,
        kernel_outputs=not args.allow_torch_outputs,
    )


def cmd_eval(args: argparse.Namespace, console: Console) -> int:
    from kernelcraft.measure.judge import judge_files
    from kernelcraft.report import eval_table

    with console.status("judging (worker subprocess)..."):
        res = judge_files(args.candidate, args.ref, _opts(args))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res.to_json(), indent=2, default=str))
    console.print(eval_table(res))
    for note in res.verdict.get("notes", []):
        console.print(f"note: {note}")
    if res.status == "judge-error":
        console.print(f"[red]error:[/red] {res.detail}")
        return EXIT_INTERNAL
    if not res.correct:
        console.print(f"[red]REJECTED[/red] ({res.reason}): {res.detail}", soft_wrap=True)
        return EXIT_REJECTED
    return EXIT_OK


def cmd_bench(args: argparse.Namespace, console: Console) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from kernelcraft.bench import find_pairs, pair_key, run_bench
    from kernelcraft.measure.judge import resolve_device

    opts = _opts(args)
    out = args.out or (args.root / "bench-out")
    pairs, missing = find_pairs(args.root, args.candidates)
    if missing:
        console.print(f"{len(missing)} problems have no candidate (skipped)")
    device = resolve_device(opts.device)
    from kernelcraft.bench import load_done

    done = set() if args.fresh else set(load_done(out / "results.jsonl"))
    todo = sum(1 for p in pairs if pair_key(p, device, opts.precision) not in done)
    if todo < len(pairs):
        console.print(f"resuming: {len(pairs) - todo} of {len(pairs)} pairs already judged")
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task("judging", total=todo)
        ok = 0

        def tick(row: dict) -> None:
            nonlocal ok
            ok += bool(row.get("correct"))
            verdict = "ok" if row.get("correct") else row.get("reason") or row.get("status")
            progress.console.print(f"  {row['name']}: {verdict}")
            progress.update(task, advance=1, description=f"judging ({ok} correct)")

        rows, summary = run_bench(args.root, out, opts, candidates=args.candidates,
                                  workers=args.workers, resume=not args.fresh, on_result=tick,
                                  command=" ".join(["kernelcraft", *sys.argv[1:]]))
    console.print(summary.read_text(), markup=False, highlight=False)
    console.print(f"results: {out / 'results.jsonl'}  summary: {summary}")
    return EXIT_OK


def cmd_generate(args: argparse.Namespace, console: Console) -> int:
    from kernelcraft.generate import GenerateOptions, generate
    from kernelcraft.measure.judge import resolve_device
    from kernelcraft.target import resolve_many

    resolve_many(args.target)  # unknown targets fail before any work
    if not args.no_judge:
        resolve_device(args.device)
    from kernelcraft.plan import FusionOptions
    from kernelcraft.search.strategy import effort
    from kernelcraft.tune import TuneOptions

    if args.budget is not None:
        try:
            effort(args.effort, args.budget)
        except ValueError as exc:
            raise InputError(f"--budget: {exc}") from exc
    tune = None if args.no_tune else TuneOptions(effort=args.effort, budget=args.budget,
                                                 strategy=args.strategy, retune=args.retune,
                                                 db_path=args.db)
    opts = GenerateOptions(targets=args.target, precision=args.precision, out_dir=args.out,
                           device=args.device, judge=not args.no_judge,
                           build=not args.no_build, timeout_s=args.timeout, tune=tune,
                           db_path=args.db, cache=not (args.no_cache or args.retune),
                           fusion=FusionOptions(conv_template=args.conv_template))
    tuning = tune is not None and args.device != "cpu" and _cuda_available()
    if tuning:  # the tuner draws its own progress bars
        console.print(f"generating {args.problem.name} (capture, plan, codegen, tune, build, "
                      "judge)")
        gen = generate(args.problem, opts)
    else:
        with console.status(f"generating {args.problem.name} (capture, plan, codegen, build, "
                            "judge)"):
            gen = generate(args.problem, opts)
    console.print(gen.report_path.read_text(), markup=False, highlight=False)
    console.print(f"module: {gen.module_path}\nreport: {gen.report_path}")
    if gen.judge is not None and not gen.judge.correct:
        console.print(f"[red]REJECTED[/red] ({gen.judge.reason}): {gen.judge.detail}",
                      soft_wrap=True)
        return EXIT_REJECTED
    return EXIT_OK


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def cmd_targets(args: argparse.Namespace, console: Console) -> int:
    from dataclasses import fields

    from kernelcraft.target import TARGETS, detect, format_table, resolve

    targets = [resolve(n) for n in args.names] if args.names else list(TARGETS.values())
    if args.json:
        rows = [{f.name: _plain(getattr(t, f.name)) for f in fields(t)} for t in targets]
        print(json.dumps(rows, indent=2, default=str))
        return EXIT_OK
    console.print(format_table(targets))
    present = detect()
    console.print(f"detected GPU: {present if present else 'none'}")
    return EXIT_OK


def cmd_db(args: argparse.Namespace, console: Console) -> int:
    from rich.table import Table
    from rich.text import Text

    from kernelcraft.db import Database, default_path

    path = args.db if args.db is not None else default_path()
    if args.db_cmd == "import":
        if not args.src.is_file():
            raise InputError(f"{args.src}: file not found")
        with Database(path) as db:
            before = db.count()
            added = db.import_jsonl(args.src)
            console.print(f"imported {added} records from {args.src} into {path} "
                          f"({before + added} records now)", markup=False, highlight=False)
        return EXIT_OK
    if not path.is_file():  # read commands never create an empty database
        raise InputError(f"no tuning database at {path} (pass --db or set KERNELCRAFT_DB)")

    def resolve(db: Database, prefix: str) -> dict:
        found = db.find(prefix)
        if not found:
            raise InputError(f"no workload matches {prefix!r} in {path}")
        exact = [w for w in found if w["key"] == prefix]
        if len(found) > 1 and not exact:
            keys = ", ".join(w["key"] for w in found[:4]) + (", ..." if len(found) > 4 else "")
            raise InputError(f"workload prefix {prefix!r} is ambiguous: {len(found)} match "
                             f"({keys})")
        return (exact or found)[0]

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    with Database(path) as db:
        if args.db_cmd == "ls":
            table = Table(title=f"tuning database {path}")
            for col in ("workload", "family", "target", "precision"):
                table.add_column(col, no_wrap=True)
            for col in ("records", "ok", "best ms"):
                table.add_column(col, justify="right")
            rows = db.workloads()
            for w in rows:
                table.add_row(*(Text(str(w[c])) for c in ("key", "family", "target",
                                                           "precision")),
                              str(w["records"]), str(w["ok"]), ms(w["best_ms"]))
            console.print(table)
            console.print(f"{len(rows)} workloads, {db.count()} records",
                          markup=False, highlight=False)
        elif args.db_cmd == "show":
            w = resolve(db, args.key)
            for label, value in (("workload", w["key"]), ("strict key", w["strict_key"]),
                                 ("family", w["family"]), ("target", w["target"]),
                                 ("precision", w["precision"]),
                                 ("signature", json.dumps(w["signature"], sort_keys=True)),
                                 ("records", f"{w['records']} ({w['ok']} ok measured, "
                                             f"{w['ranked']} ranked)"),
                                 ("best ms", ms(w["best_ms"]))):
                console.print(f"{label:>10}: {value}", markup=False, highlight=False,
                              soft_wrap=True)
            recs = sorted(db.records(w["key"]),
                          key=lambda r: (r.status != "ok", r.source != "measured",
                                         r.latency_ms is None, r.latency_ms or 0.0, r.id))
            shown = recs if args.limit <= 0 else recs[:args.limit]
            table = Table()
            for col in ("id", "status", "source", "latency ms"):
                table.add_column(col, justify="right" if col in ("id", "latency ms") else "left",
                                 no_wrap=True)
            table.add_column("config", overflow="fold")
            table.add_column("error", overflow="fold")
            for r in shown:
                table.add_row(str(r.id), Text(r.status), Text(r.source), ms(r.latency_ms),
                              Text(r.config), Text(r.error.strip().splitlines()[0][:120]
                                                   if r.error.strip() else ""))
            console.print(table)
            if len(shown) < len(recs):
                console.print(f"showing {len(shown)} of {len(recs)} records (--limit 0 for all)")
        else:  # export
            key = resolve(db, args.workload)["key"] if args.workload is not None else None
            n = db.export_jsonl(args.out, workload=key)
            console.print(f"exported {n} records to {args.out}", markup=False, highlight=False)
    return EXIT_OK


def _plain(value: object) -> object:
    """Mappings and tuples of the frozen target table as JSON-friendly values."""
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}  # type: ignore[attr-defined]
    if isinstance(value, (tuple, list, frozenset, set)):
        return [_plain(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    import warnings

    # torch.export's own deprecation chatter is not the user's business
    warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=False)
    if not console.is_terminal:  # pipes and CI logs: do not squeeze tables into 80 columns
        console = Console(stderr=False, width=160)
    err = Console(stderr=True)
    try:
        handler = {"eval": cmd_eval, "bench": cmd_bench, "targets": cmd_targets,
                   "generate": cmd_generate, "db": cmd_db}[args.cmd]
        return handler(args, console)
    except InputError as exc:
        if args.debug:
            traceback.print_exc()
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return EXIT_INPUT
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except Exception as exc:  # a bug of ours: say so in one line unless debugging
        if args.debug:
            traceback.print_exc()
        err.print(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
                  markup=False, highlight=False, soft_wrap=True)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
