"""The tuning database: every config tried for a workload, measured or ranked.

SQLite in WAL mode so several measuring workers (processes) can write to one file while
readers keep reading; a busy timeout makes a writer wait for the lock instead of failing.
Every write is one ``BEGIN IMMEDIATE`` transaction, so a crash or SIGKILL loses at most the
transaction in flight and a search can resume from what was committed.

A workload is one fused group on one target in one precision mode (see DESIGN.md,
"Database"): its key hashes the group signature, target and precision, so a hit skips the
search; the strict key adds toolchain versions for callers that only trust records made
by the same compiler.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from kernelcraft.cache import cache_dir
from kernelcraft.errors import InputError

STATUSES = ("ok", "wrong", "compile-error", "timeout", "crash", "pruned")
SOURCES = ("measured", "ranked")
SCHEMA_VERSION = 4  # 2: searches, 3: choices, 4: modules
BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workloads (
    key        TEXT PRIMARY KEY,
    strict_key TEXT NOT NULL,
    family     TEXT NOT NULL,
    target     TEXT NOT NULL,
    precision  TEXT NOT NULL,
    signature  TEXT NOT NULL,
    created    REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    id         INTEGER PRIMARY KEY,
    workload   TEXT NOT NULL REFERENCES workloads(key),
    config     TEXT NOT NULL,
    status     TEXT NOT NULL,
    latency_ms REAL,
    error      TEXT NOT NULL DEFAULT '',
    features   TEXT NOT NULL DEFAULT '{}',
    versions   TEXT NOT NULL DEFAULT '{}',
    source     TEXT NOT NULL DEFAULT 'measured',
    created    REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_workload ON records(workload, source, status, latency_ms);
CREATE INDEX IF NOT EXISTS records_by_config ON records(workload, config);
CREATE TABLE IF NOT EXISTS searches (
    workload   TEXT NOT NULL REFERENCES workloads(key),
    effort     TEXT NOT NULL,
    stopped    TEXT NOT NULL,
    measured   INTEGER NOT NULL,
    finished   REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS choices (
    key        TEXT PRIMARY KEY,
    choices    TEXT NOT NULL,
    versions   TEXT NOT NULL DEFAULT '{}',
    created    REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS modules (
    key        TEXT PRIMARY KEY,
    problem    TEXT NOT NULL,
    files      TEXT NOT NULL,
    meta       TEXT NOT NULL DEFAULT '{}',
    created    REAL NOT NULL
);
"""


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, retried: SQLite may answer "database is locked" at once, without its
    busy handler, while another process creates the same file (two tuners starting)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _canonical(obj: Any) -> str:
    """Compact, key-sorted JSON: the same value always hashes the same."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def workload_key(signature: Mapping[str, Any], target: str, precision: str) -> str:
    """Short stable id of (group signature, target, precision); key order does not matter."""
    text = _canonical({"signature": signature, "target": target, "precision": precision})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def strict_key(signature: Mapping[str, Any], target: str, precision: str,
               versions: Mapping[str, Any]) -> str:
    """Like :func:`workload_key` but also bound to the toolchain that produced the records."""
    text = _canonical({"signature": signature, "target": target, "precision": precision,
                       "versions": versions})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def toolchain_versions() -> dict[str, str]:
    """Installed versions of what shapes a kernel, read from metadata (no heavy imports)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for name in ("triton", "torch"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def config_key(config: Mapping[str, Any] | str) -> str:
    """Canonical text of a config, identical to ``space.Config.key`` for the same values."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as exc:
            raise ValueError(f"config is not JSON: {exc}") from None
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, not {type(config).__name__}")
    return json.dumps(dict(config), sort_keys=True, default=str)


def default_path() -> Path:
    """``$KERNELCRAFT_DB``, else ``tuning.db`` in kernelcraft's cache directory."""
    env = os.environ.get("KERNELCRAFT_DB")
    return Path(env) if env else cache_dir() / "tuning.db"


@dataclass(frozen=True)
class Record:
    """One row of ``records``; ``config`` is the canonical JSON text (``Config.key``)."""

    id: int
    workload: str
    config: str
    status: str
    latency_ms: float | None
    error: str = ""
    features: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Any] = field(default_factory=dict)
    source: str = "measured"
    created: float = 0.0

    @property
    def config_dict(self) -> dict[str, Any]:
        return json.loads(self.config)

    @classmethod
    def _from_row(cls, row: sqlite3.Row) -> Record:
        return cls(id=row["id"], workload=row["workload"], config=row["config"],
                   status=row["status"], latency_ms=row["latency_ms"], error=row["error"],
                   features=json.loads(row["features"]), versions=json.loads(row["versions"]),
                   source=row["source"], created=row["created"])


_RECORD_FIELDS = ("workload", "config", "status", "latency_ms", "error", "features",
                  "versions", "source", "created")


def _record_values(workload: str, config: Mapping[str, Any] | str, status: str,
                   latency_ms: float | None = None, error: str = "",
                   features: Mapping[str, Any] | None = None,
                   versions: Mapping[str, Any] | None = None, source: str = "measured",
                   created: float | None = None) -> tuple:
    """Validate one record and return its column values in ``_RECORD_FIELDS`` order."""
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    if source not in SOURCES:
        raise ValueError(f"source {source!r} is not one of {', '.join(SOURCES)}")
    if latency_ms is not None:
        latency_ms = float(latency_ms)
        if not math.isfinite(latency_ms) or latency_ms < 0:
            raise ValueError(f"latency_ms must be a finite number >= 0, not {latency_ms}")
    elif status == "ok" and source == "measured":
        raise ValueError("a measured record with status 'ok' needs latency_ms")
    return (workload, config_key(config), status, latency_ms, str(error or ""),
            json.dumps(dict(features or {}), sort_keys=True, default=str),
            json.dumps(dict(versions or {}), sort_keys=True, default=str),
            source, time.time() if created is None else float(created))


class Database:
    """A connection to one tuning database file; cheap to open, one per process or thread."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # autocommit mode: transactions are explicit (BEGIN IMMEDIATE) so that a writer
        # takes the lock up front and the busy timeout applies, instead of failing on upgrade
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            _enable_wal(self._conn)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._init_schema()
        except sqlite3.OperationalError:
            self._conn.close()
            raise
        except sqlite3.DatabaseError as exc:  # e.g. "file is not a database"
            self._conn.close()
            raise InputError(f"{self.path}: not a tuning database ({exc})") from None

    def _init_schema(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise InputError(f"{self.path}: made by a newer kernelcraft (schema {version})")
        if version == SCHEMA_VERSION:
            return
        with self._write():
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    self._conn.execute(stmt)
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it is committed or none of it."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        """Raw SQL for inspection (``PRAGMA integrity_check``, ad-hoc queries)."""
        return self._conn.execute(sql, tuple(params))

    # workloads

    def add_workload(self, signature: Mapping[str, Any], target: str, precision: str,
                     family: str = "", versions: Mapping[str, Any] | None = None) -> str:
        """Register a workload (no-op if known) and return its key.

        The strict key is taken with ``versions`` (default: the installed toolchain) the
        first time the workload is seen; each record also carries its own versions.
        """
        key = workload_key(signature, target, precision)
        skey = strict_key(signature, target, precision,
                          toolchain_versions() if versions is None else versions)
        with self._write() as conn:
            self._insert_workload(conn, key, skey, family, target, precision, signature,
                                  time.time())
        return key

    @staticmethod
    def _insert_workload(conn: sqlite3.Connection, key: str, skey: str, family: str,
                         target: str, precision: str, signature: Mapping[str, Any],
                         created: float) -> None:
        conn.execute(
            "INSERT OR IGNORE INTO workloads"
            " (key, strict_key, family, target, precision, signature, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, skey, family, target, precision, _canonical(dict(signature)), created))

    def workload(self, key: str) -> dict[str, Any] | None:
        """The workload with exactly this key (with counts), or None."""
        rows = self._workload_rows("WHERE w.key = ?", (key,))
        return rows[0] if rows else None

    def workloads(self) -> list[dict[str, Any]]:
        """Every workload with its record count, ok count and best measured latency."""
        return self._workload_rows("", ())

    def find(self, prefix: str) -> list[dict[str, Any]]:
        """Workloads whose key starts with ``prefix`` (what a user types from ``db ls``)."""
        return self._workload_rows("WHERE substr(w.key, 1, ?) = ?", (len(prefix), prefix))

    def _workload_rows(self, where: str, params: tuple) -> list[dict[str, Any]]:
        sql = f"""
            SELECT w.*, count(r.id) AS records,
                   coalesce(sum(r.status = 'ok' AND r.source = 'measured'), 0) AS ok,
                   coalesce(sum(r.source = 'ranked'), 0) AS ranked,
                   min(CASE WHEN r.status = 'ok' AND r.source = 'measured'
                       THEN r.latency_ms END) AS best_ms
            FROM workloads w LEFT JOIN records r ON r.workload = w.key
            {where} GROUP BY w.key ORDER BY w.family, w.target, w.precision, w.key"""
        out = []
        for row in self._conn.execute(sql, params):
            item = dict(row)
            item["signature"] = json.loads(item["signature"])
            out.append(item)
        return out

    # records

    def add_record(self, workload: str, config: Mapping[str, Any] | str, status: str,
                   latency_ms: float | None = None, error: str = "",
                   features: Mapping[str, Any] | None = None,
                   versions: Mapping[str, Any] | None = None, source: str = "measured",
                   created: float | None = None) -> int:
        """Store one result; the workload must have been added. Returns the record id."""
        return self.add_records([dict(workload=workload, config=config, status=status,
                                      latency_ms=latency_ms, error=error, features=features,
                                      versions=versions, source=source, created=created)])[0]

    def add_records(self, records: Iterable[Mapping[str, Any] | Record]) -> list[int]:
        """Store many results in ONE transaction (all or nothing); returns their ids.

        Items are mappings of :meth:`add_record`'s arguments, or :class:`Record` objects
        (their ``id`` is ignored).
        """
        rows = []
        for item in records:
            if isinstance(item, Record):
                item = {name: getattr(item, name) for name in _RECORD_FIELDS}
            rows.append(_record_values(**item))
        return self._insert_records(rows)

    def _insert_records(self, rows: list[tuple]) -> list[int]:
        ids = []
        try:
            with self._write() as conn:
                for row in rows:
                    cur = conn.execute(
                        f"INSERT INTO records ({', '.join(_RECORD_FIELDS)})"
                        f" VALUES ({', '.join('?' * len(_RECORD_FIELDS))})", row)
                    ids.append(int(cur.lastrowid or 0))
        except sqlite3.IntegrityError as exc:
            unknown = sorted(k for k in {r[0] for r in rows} if not self._conn.execute(
                "SELECT 1 FROM workloads WHERE key = ?", (k,)).fetchone())
            if unknown:
                raise ValueError(f"unknown workload {unknown[0]!r}: "
                                 "add_workload() first") from None
            raise ValueError(str(exc)) from None
        return ids

    def update_record(self, record_id: int, status: str, latency_ms: float | None = None,
                      error: str = "", features: Mapping[str, Any] | None = None) -> None:
        """Settle a record written before its config ran (an in-flight marker: a tuner
        killed while the config runs leaves it as a ``timeout``, never retried or chosen)."""
        row = self._conn.execute("SELECT workload, config, source, versions FROM records "
                                 "WHERE id = ?", (record_id,)).fetchone()
        if row is None:
            raise ValueError(f"no record {record_id}")
        vals = _record_values(row[0], row[1], status, latency_ms, error, features,
                              json.loads(row[3] or "{}"), row[2])
        with self._write() as conn:
            conn.execute("UPDATE records SET status = ?, latency_ms = ?, error = ?, "
                         "features = ? WHERE id = ?",
                         (vals[2], vals[3], vals[4], vals[5], record_id))

    def mark_searched(self, workload: str, effort: str, stopped: str, measured: int) -> None:
        """A search of ``workload`` ran to its end: later runs take its best as a hit. An
        interrupted search leaves no mark, so a rerun resumes it."""
        with self._write() as conn:
            conn.execute("INSERT INTO searches VALUES (?, ?, ?, ?, ?)",
                         (workload, effort, stopped, int(measured), time.time()))

    def save_choices(self, key: str, choices: Iterable[Mapping[str, Any]]) -> None:
        """The measured kernel-or-eager choices of one emitted module on one GPU
        (``key``: module text, device, precision, versions), so that generating the same
        module again reuses them instead of timing it again."""
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO choices VALUES (?, ?, ?, ?)",
                         (key, json.dumps([dict(c) for c in choices]),
                          _canonical(toolchain_versions()), time.time()))

    def choices(self, key: str) -> list[dict[str, Any]] | None:
        row = self._conn.execute("SELECT choices FROM choices WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def save_module(self, key: str, problem: str, files: Mapping[str, str],
                    meta: Mapping[str, Any]) -> None:
        """A generated module's files (kernel.py, reports) under ``key`` (problem text,
        options, GPU, toolchain, kernelcraft's code and this database's state), so that
        generating the same problem again is one lookup."""
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO modules VALUES (?, ?, ?, ?, ?)",
                         (key, problem, json.dumps(dict(files)), _canonical(dict(meta)),
                          time.time()))

    def module(self, key: str) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT * FROM modules WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return {"problem": row["problem"], "files": json.loads(row["files"]),
                "meta": json.loads(row["meta"]), "created": row["created"]}

    def state(self) -> list[Any]:
        """What a stored module depends on here: the newest record and choice (a new
        measurement may change a config or a kernel-or-eager choice)."""
        rec = self._conn.execute("SELECT max(id) FROM records").fetchone()[0]
        cho = self._conn.execute("SELECT count(*), max(created) FROM choices").fetchone()
        return [rec, *cho]

    def searched(self, workload: str) -> bool:
        return self._conn.execute("SELECT 1 FROM searches WHERE workload = ? LIMIT 1",
                                  (workload,)).fetchone() is not None

    def records(self, workload: str, status: str | None = None,
                source: str | None = None) -> list[Record]:
        """A workload's records in insertion order, optionally of one status and source."""
        sql, params = "SELECT * FROM records WHERE workload = ?", [workload]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        if source is not None:
            sql += " AND source = ?"
            params.append(source)
        return [Record._from_row(r) for r in self._conn.execute(sql + " ORDER BY id", params)]

    def best(self, workload: str) -> Record | None:
        """The fastest correct measured record: what a database hit hands back."""
        row = self._conn.execute(
            "SELECT * FROM records WHERE workload = ? AND status = 'ok' AND source = 'measured'"
            " AND latency_ms IS NOT NULL ORDER BY latency_ms, id LIMIT 1", (workload,)).fetchone()
        return Record._from_row(row) if row else None

    def measured_configs(self, workload: str) -> set[str]:
        """Config keys already tried on hardware (any status): a resumed search skips them."""
        rows = self._conn.execute(
            "SELECT DISTINCT config FROM records WHERE workload = ? AND source = 'measured'",
            (workload,))
        return {r[0] for r in rows}

    def count(self, workload: str | None = None) -> int:
        """Number of records, of one workload or all."""
        if workload is None:
            return self._conn.execute("SELECT count(*) FROM records").fetchone()[0]
        return self._conn.execute("SELECT count(*) FROM records WHERE workload = ?",
                                  (workload,)).fetchone()[0]

    # export / import

    def export_jsonl(self, path: str | Path, workload: str | None = None) -> int:
        """Write records (all, or one workload's) as self-contained JSON lines; returns count.

        Each line carries its workload's fields, so a file can be imported anywhere. The file
        is written next to its destination and renamed, so readers never see half of it.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        sql = ("SELECT r.*, w.strict_key AS w_strict_key, w.family AS w_family,"
               " w.target AS w_target, w.precision AS w_precision,"
               " w.signature AS w_signature, w.created AS w_created"
               " FROM records r JOIN workloads w ON w.key = r.workload")
        params: tuple = ()
        if workload is not None:
            sql, params = sql + " WHERE r.workload = ?", (workload,)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        n = 0
        try:
            with tmp.open("w") as fh:
                for row in self._conn.execute(sql + " ORDER BY r.workload, r.id", params):
                    line = {
                        "workload": {
                            "key": row["workload"], "strict_key": row["w_strict_key"],
                            "family": row["w_family"], "target": row["w_target"],
                            "precision": row["w_precision"],
                            "signature": json.loads(row["w_signature"]),
                            "created": row["w_created"],
                        },
                        "config": json.loads(row["config"]),
                        "status": row["status"], "latency_ms": row["latency_ms"],
                        "error": row["error"], "features": json.loads(row["features"]),
                        "versions": json.loads(row["versions"]), "source": row["source"],
                        "created": row["created"],
                    }
                    fh.write(json.dumps(line, sort_keys=True) + "\n")
                    n += 1
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
        return n

    def import_jsonl(self, path: str | Path) -> int:
        """Add the records of an exported file; returns how many were new.

        Exact duplicates (same workload, config, status, latency, source and time) are
        skipped, so importing a file twice, or a file that overlaps, is harmless. The whole
        file is checked before anything is written: a bad line raises InputError naming it.
        """
        path = Path(path)
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise InputError(f"{path}: file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read ({exc})") from None
        workloads: dict[str, tuple] = {}
        rows: list[tuple] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                wl, row = _parse_line(line)
            except (ValueError, KeyError, TypeError) as exc:
                msg = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
                raise InputError(f"{path}: line {lineno}: {msg}") from None
            workloads.setdefault(wl[0], wl)
            rows.append(row)
        added = 0
        with self._write() as conn:
            for wl in workloads.values():
                self._insert_workload(conn, *wl)
            for row in rows:
                dup = conn.execute(
                    "SELECT 1 FROM records WHERE workload = ? AND config = ? AND status = ?"
                    " AND latency_ms IS ? AND source = ? AND created = ? LIMIT 1",
                    (row[0], row[1], row[2], row[3], row[7], row[8])).fetchone()
                if dup:
                    continue
                conn.execute(f"INSERT INTO records ({', '.join(_RECORD_FIELDS)})"
                             f" VALUES ({', '.join('?' * len(_RECORD_FIELDS))})", row)
                added += 1
        return added


def _parse_line(line: str) -> tuple[tuple, tuple]:
    """One exported line -> (workload insert values, record column values)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("workload"), dict):
        raise ValueError("expected an object with a 'workload' object")
    w = data["workload"]
    key = w["key"]
    if not isinstance(key, str) or not key:
        raise ValueError("workload key must be a non-empty string")
    if not isinstance(w["signature"], dict):
        raise ValueError("workload signature must be an object")
    created = data["created"]
    if not isinstance(created, (int, float)):
        raise ValueError("created must be a number")
    wl = (key, str(w.get("strict_key") or key), str(w.get("family") or ""), str(w["target"]),
          str(w["precision"]), w["signature"], float(w.get("created") or created))
    row = _record_values(key, data["config"], data["status"], data.get("latency_ms"),
                         data.get("error") or "", data.get("features"), data.get("versions"),
                         data.get("source") or "measured", created)
    return wl, row
