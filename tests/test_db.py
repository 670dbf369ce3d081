"""The tuning database: keys, records, faults (concurrent writers, SIGKILL), JSON lines, CLI."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from kernelcraft.cli import main
from kernelcraft.db import (
    SCHEMA_VERSION,
    Database,
    Record,
    config_key,
    default_path,
    strict_key,
    workload_key,
)
from kernelcraft.errors import InputError
from kernelcraft.space import Config

SIG = {"graph": "ab12", "shapes": [[64, 48]], "dtypes": ["float32"], "strides": [[48, 1]]}
VERSIONS = {"triton": "3.9.0", "torch": "2.13.0"}


@pytest.fixture
def db(tmp_path: Path):
    with Database(tmp_path / "t.db") as d:
        yield d


@pytest.fixture
def wl(db: Database) -> str:
    return db.add_workload(SIG, "sm_90", "fp32", family="pointwise", versions=VERSIONS)


def test_keys_stable_and_distinct():
    k = workload_key(SIG, "sm_90", "fp32")
    assert len(k) == 16 and int(k, 16) >= 0
    assert workload_key(dict(reversed(list(SIG.items()))), "sm_90", "fp32") == k
    assert workload_key(SIG, "gfx942", "fp32") != k
    assert workload_key(SIG, "sm_90", "bf16") != k
    s = strict_key(SIG, "sm_90", "fp32", VERSIONS)
    assert s != k and strict_key(SIG, "sm_90", "fp32", {**VERSIONS, "triton": "3.10"}) != s
    assert config_key({"B": 2, "A": 1}) == Config({"A": 1, "B": 2}).key
    assert config_key('{"B": 2, "A": 1}') == Config({"A": 1, "B": 2}).key


def test_wal_and_default_path(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELCRAFT_DB", str(tmp_path / "deep" / "dir" / "x.db"))
    assert default_path() == tmp_path / "deep" / "dir" / "x.db"
    with Database() as d:
        assert d.path.is_file()
        assert d.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert d.execute("PRAGMA busy_timeout").fetchone()[0] >= 30000
    monkeypatch.delenv("KERNELCRAFT_DB")
    assert default_path() == Path(os.environ["KERNELCRAFT_CACHE"]) / "tuning.db"


def test_not_a_database(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match="not a tuning database"):
        Database(bad)


def test_add_workload_idempotent(db, wl):
    assert db.add_workload(SIG, "sm_90", "fp32", family="pointwise", versions=VERSIONS) == wl
    assert db.add_workload(SIG, "sm_90", "fp32", family="other", versions={}) == wl
    rows = db.workloads()
    assert len(rows) == 1
    assert rows[0]["key"] == wl and rows[0]["family"] == "pointwise"
    assert rows[0]["signature"] == SIG
    assert rows[0]["strict_key"] == strict_key(SIG, "sm_90", "fp32", VERSIONS)
    assert db.find(wl[:3])[0]["key"] == wl and db.find("zz") == []


def test_records_best_and_measured(db, wl):
    a, b, c = Config({"BLOCK": 64}), Config({"BLOCK": 128}), Config({"BLOCK": 256})
    db.add_record(wl, a, "ok", 2.0, features={"x": 1.0}, versions=VERSIONS)
    rid = db.add_record(wl, b, "ok", 1.5)
    db.add_record(wl, c, "compile-error", error="out of shared memory")
    db.add_record(wl, {"BLOCK": 512}, "ok", 0.1, source="ranked")  # a guess, not hardware
    db.add_record(wl, {"BLOCK": 1024}, "pruned")
    assert db.best(wl).id == rid and db.best(wl).config == b.key
    assert db.measured_configs(wl) == {a.key, b.key, c.key, config_key({"BLOCK": 1024})}
    assert [r.config_dict["BLOCK"] for r in db.records(wl, status="ok")] == [64, 128, 512]
    assert [r.source for r in db.records(wl, source="ranked")] == ["ranked"]
    first = db.records(wl)[0]
    assert first.features == {"x": 1.0} and first.versions == VERSIONS and first.created > 0
    # the same config measured and ranked: both kept
    db.add_record(wl, {"BLOCK": 512}, "ok", 0.9)
    assert len([r for r in db.records(wl) if r.config_dict["BLOCK"] == 512]) == 2
    row = db.workloads()[0]
    assert (row["records"], row["ok"], row["ranked"], row["best_ms"]) == (6, 3, 1, 0.9)
    other = db.add_workload(SIG, "gfx942", "fp32", family="pointwise", versions=VERSIONS)
    assert db.best(other) is None and db.records(other) == []


@pytest.mark.parametrize("kwargs, message", [
    (dict(status="fast", latency_ms=1.0), "status 'fast'"),
    (dict(status="OK", latency_ms=1.0), "status 'OK'"),
    (dict(status="ok", latency_ms=1.0, source="guessed"), "source 'guessed'"),
    (dict(status="ok"), "needs latency_ms"),
    (dict(status="ok", latency_ms=float("nan")), "finite"),
])
def test_bad_record_rejected(db, wl, kwargs, message):
    with pytest.raises(ValueError, match=message):
        db.add_record(wl, {"BLOCK": 64}, **kwargs)
    assert db.count() == 0


def test_unknown_workload_rejected(db):
    with pytest.raises(ValueError, match="unknown workload"):
        db.add_record("0123456789abcdef", {"BLOCK": 64}, "crash")


def test_add_records_one_transaction(db, wl):
    ids = db.add_records([dict(workload=wl, config={"B": i}, status="ok", latency_ms=i + 1.0)
                          for i in range(5)])
    assert len(ids) == 5 and db.count(wl) == 5
    # one bad item: nothing of the batch is stored
    with pytest.raises(ValueError):
        db.add_records([dict(workload=wl, config={"B": 9}, status="ok", latency_ms=1.0),
                        dict(workload=wl, config={"B": 10}, status="bogus")])
    with pytest.raises(ValueError):
        db.add_records([dict(workload=wl, config={"B": 9}, status="ok", latency_ms=1.0),
                        dict(workload="feedfeedfeedfeed", config={"B": 10}, status="crash")])
    assert db.count(wl) == 5
    # Record objects round-trip through add_records
    db.add_records(db.records(wl)[:2])
    assert db.count(wl) == 7


# --- faults: concurrent writers, SIGKILL mid-write -------------------------------------


def _writer(path: str, tag: int, n: int, go) -> None:
    go.wait(30)
    with Database(path) as d:
        key = d.add_workload(SIG, "sm_90", "fp32", family="pointwise", versions=VERSIONS)
        for i in range(n):
            d.add_record(key, {"w": tag, "i": i}, "ok", 1.0 + i)


def test_choices_saved_and_reused(db):
    assert db.choices("k") is None
    saved = [{"group": 0, "kernel_ms": 1.0, "eager_ms": 2.0, "kept": True},
             {"group": -1, "kernel_ms": 1.5, "eager_ms": 1.4, "kept": False}]
    db.save_choices("k", saved)
    assert db.choices("k") == saved
    db.save_choices("k", saved[:1])  # a new measurement replaces the old
    assert db.choices("k") == saved[:1]


def test_schema_2_database_gains_the_choices_table(tmp_path):
    """A database written by the previous schema opens, keeps its rows and gains the
    choices table."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE workloads (key TEXT PRIMARY KEY, strict_key TEXT NOT NULL,
            family TEXT NOT NULL, target TEXT NOT NULL, precision TEXT NOT NULL,
            signature TEXT NOT NULL, created REAL NOT NULL);
        INSERT INTO workloads VALUES ('w', 's', 'matmul', 'sm_90', 'fp32', '{}', 0);
        PRAGMA user_version=2;
    """)
    conn.close()
    with Database(path) as db:
        assert db.workload("w") is not None
        db.save_choices("k", [{"group": 1, "kernel_ms": 1.0, "eager_ms": 1.0, "kept": True}])
        assert db.choices("k")[0]["group"] == 1
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "c.db")
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(path, t, 300, go)) for t in range(2)]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Database(path) as d:
        assert d.count() == 600
        key = workload_key(SIG, "sm_90", "fp32")
        configs = d.measured_configs(key)
        assert len(configs) == 600
        assert config_key({"w": 1, "i": 299}) in configs


BATCH = 7


def _killable(path: str, progress: str) -> None:
    with Database(path) as d:
        key = d.add_workload(SIG, "sm_90", "fp32", versions=VERSIONS)
        with open(progress, "a") as log:
            for b in range(100_000):
                d.add_records([dict(workload=key, config={"b": b, "j": j}, status="ok",
                                    latency_ms=float(j), error="x" * 500)
                               for j in range(BATCH)])
                log.write(f"{b}\n")  # logged only after the commit returned
                log.flush()


def test_sigkill_mid_write_leaves_db_intact(tmp_path):
    path, progress = str(tmp_path / "k.db"), tmp_path / "progress.txt"
    progress.touch()
    p = mp.get_context("spawn").Process(target=_killable, args=(path, str(progress)))
    p.start()
    deadline = time.monotonic() + 30
    while len(progress.read_text().splitlines()) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGKILL)
    p.join(10)
    assert p.exitcode == -signal.SIGKILL
    logged = {int(x) for x in progress.read_text().split()}
    assert len(logged) >= 40, "the writer never got going"
    key = workload_key(SIG, "sm_90", "fp32")
    with Database(path) as d:
        assert d.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        recs = d.records(key)
        batches = {r.config_dict["b"] for r in recs}
        assert logged <= batches  # every committed batch survived
        assert len(recs) == BATCH * len(batches)  # and no batch was half written
        assert batches == set(range(len(batches)))
        # resume: a new connection writes again
        d.add_record(key, {"b": -1, "j": 0}, "ok", 0.5)
        assert d.count() == len(recs) + 1 and d.best(key).latency_ms == 0.0
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# --- JSON lines ------------------------------------------------------------------------


def _fill(db: Database) -> tuple[str, str]:
    a = db.add_workload(SIG, "sm_90", "fp32", family="pointwise", versions=VERSIONS)
    b = db.add_workload({**SIG, "graph": "cd34"}, "gfx942", "bf16", family="reduction",
                        versions=VERSIONS)
    db.add_record(a, {"BLOCK": 64}, "ok", 1.25, features={"k": 2.0}, versions=VERSIONS)
    db.add_record(a, {"BLOCK": 128}, "timeout", error="hung after 600 s")
    db.add_record(a, {"BLOCK": 64}, "ok", 1.0, source="ranked")
    db.add_record(b, {"R": 4, "num_warps": 8}, "wrong", error="max abs err 3e-2")
    db.add_record(b, {"R": 8, "num_warps": 4}, "ok", 0.5)
    return a, b


def _fields(recs: list[Record]) -> list[tuple]:
    return [(r.workload, r.config, r.status, r.latency_ms, r.error, r.features, r.versions,
             r.source, r.created) for r in recs]


def test_export_import_round_trip(db, tmp_path):
    a, b = _fill(db)
    out = tmp_path / "x" / "all.jsonl"
    assert db.export_jsonl(out) == 5
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert {x["workload"]["key"] for x in lines} == {a, b}
    assert all({"key", "family", "target", "precision", "signature"} <= set(x["workload"])
               for x in lines)
    with Database(tmp_path / "fresh.db") as fresh:
        assert fresh.import_jsonl(out) == 5
        for key in (a, b):
            assert _fields(fresh.records(key)) == _fields(db.records(key))
        assert [(w["key"], w["strict_key"], w["family"], w["target"], w["precision"],
                 w["signature"]) for w in fresh.workloads()] == \
               [(w["key"], w["strict_key"], w["family"], w["target"], w["precision"],
                 w["signature"]) for w in db.workloads()]
        assert fresh.import_jsonl(out) == 0  # duplicates skipped
        assert fresh.count() == 5
        assert fresh.best(a).latency_ms == 1.25
    # one workload only; importing into the source db adds nothing
    assert db.export_jsonl(tmp_path / "b.jsonl", workload=b) == 2
    assert db.import_jsonl(tmp_path / "b.jsonl") == 0


@pytest.mark.parametrize("bad, message", [
    ("{not json", "not JSON"),
    ("[1, 2]", "'workload' object"),
    ('{"workload": {"key": "k"}}', "missing field"),
    ("STATUS", "status 'fast'"),
])
def test_import_malformed_names_line(db, tmp_path, bad, message):
    _fill(db)
    out = tmp_path / "x.jsonl"
    db.export_jsonl(out)
    lines = out.read_text().splitlines()
    if bad == "STATUS":
        bad = lines[0].replace('"status": "ok"', '"status": "fast"')
    lines.insert(2, bad)
    out.write_text("\n".join(lines) + "\n")
    with Database(tmp_path / "fresh.db") as fresh:
        with pytest.raises(InputError, match=f"line 3: .*{message}"):
            fresh.import_jsonl(out)
        assert fresh.count() == 0  # nothing of a bad file is imported


# --- CLI -------------------------------------------------------------------------------


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def filled(tmp_path) -> tuple[Path, str, str]:
    path = tmp_path / "cli.db"
    with Database(path) as d:
        a, b = _fill(d)
    return path, a, b


def test_cli_ls(capsys, filled):
    path, a, b = filled
    code, out, _ = run(capsys, "db", "ls", "--db", str(path))
    assert code == 0
    for text in (a, b, "pointwise", "reduction", "gfx942", "bf16", "1.2500", "0.5000"):
        assert text in out
    assert "2 workloads, 5 records" in out


def test_cli_show(capsys, filled):
    path, a, _ = filled
    code, out, _ = run(capsys, "db", "show", a[:6], "--db", str(path))
    assert code == 0
    assert a in out and "pointwise" in out and '"graph": "ab12"' in out
    # measured ok first, then ranked, failures last
    table = out[out.index("┏"):]
    assert table.index("1.2500") < table.index("ranked") < table.index("timeout")
    assert "hung after 600 s" in out
    code, out, _ = run(capsys, "db", "show", a, "--db", str(path), "--limit", "1")
    assert code == 0 and "timeout" not in out and "showing 1 of 3 records" in out


def test_cli_show_bad_prefix(capsys, tmp_path):
    path = tmp_path / "many.db"
    with Database(path) as d:  # 17 workloads: two keys must share a first hex digit
        keys = [d.add_workload({"graph": str(i)}, "sm_90", "fp32") for i in range(17)]
    firsts = [k[0] for k in keys]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    for prefix, message in ((shared, "ambiguous"), ("xyz", "no workload matches")):
        code, out, err = run(capsys, "db", "show", prefix, "--db", str(path))
        assert code == 2 and message in err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err + out


@pytest.mark.parametrize("cmd", [["ls"], ["show", "ab"], ["export", "OUT"]])
def test_cli_missing_db_exit_2(capsys, tmp_path, cmd):
    path = tmp_path / "absent.db"
    cmd = [str(tmp_path / "o.jsonl") if c == "OUT" else c for c in cmd]
    code, _, err = run(capsys, "db", *cmd, "--db", str(path))
    assert code == 2 and "no tuning database" in err
    assert len(err.strip().splitlines()) == 1
    assert not path.exists() and not (tmp_path / "o.jsonl").exists()


def test_cli_export_import(capsys, filled, tmp_path, monkeypatch):
    path, a, b = filled
    out = tmp_path / "e.jsonl"
    code, text, _ = run(capsys, "db", "export", str(out), "--db", str(path))
    assert code == 0 and "exported 5 records" in text
    code, text, _ = run(capsys, "db", "export", str(tmp_path / "one.jsonl"), "--db", str(path),
                        "--workload", b[:5])
    assert code == 0 and "exported 2 records" in text
    fresh = tmp_path / "new" / "fresh.db"
    monkeypatch.setenv("KERNELCRAFT_DB", str(fresh))  # import creates the default database
    code, text, _ = run(capsys, "db", "import", str(out))
    assert code == 0 and "imported 5 records" in text and fresh.is_file()
    code, text, _ = run(capsys, "db", "import", str(out))
    assert code == 0 and "imported 0 records" in text
    out.write_text(out.read_text() + "garbage\n")
    code, _, err = run(capsys, "db", "import", str(out))
    assert code == 2 and "line 6" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "db", "import", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "file not found" in err
