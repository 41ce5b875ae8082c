"""What commands print for people: cell text as it is, layouts that stay readable on a narrow
terminal or a pipe, terminal escapes from log lines shown as escapes, every result type printable
(issue 14 item 2, issue 15 items 10 and 11)."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import polars as pl
import pytest

from forensics.cli._table import boxed_width, emit_table, render_vertical
from hostile_kit import hostile

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
XID = ROOT / "sample_bundles" / "xid_79.tar.zst"


def cli(*args, env=None, **kw) -> subprocess.CompletedProcess:
    e = {**os.environ, "TZ": "UTC", "LC_ALL": "C", **(env or {})}
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=e, timeout=300, **kw)


def on_terminal(args, columns: int, env: dict) -> str:
    """Run the CLI with standard output on a pseudo-terminal `columns` wide; what it printed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    e = {**os.environ, "TZ": "UTC", "LC_ALL": "C", "COLUMNS": str(columns), "TERM": "xterm", **env}
    e.pop("NO_COLOR", None)
    p = subprocess.Popen([str(EXE), *map(str, args)], stdout=slave, stderr=subprocess.PIPE, env=e)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=300)
    os.close(master)
    assert p.returncode == 0, p.stderr.read()
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.fixture
def cache(cli_env):
    return {"FORENSICS_CACHE_DIR": cli_env["FORENSICS_CACHE_DIR"]}


def test_pci_address_and_markup_are_printed_literally(cache):
    r = cli("query", XID, "SELECT '0000:ab:00.0' AS pci, ':smile: [bold]x[/bold]' AS text", env=cache)
    assert r.returncode == 0, r.stderr
    assert "0000:ab:00.0" in r.stdout and ":smile: [bold]x[/bold]" in r.stdout
    assert "\U0001f18e" not in r.stdout  # the AB emoji rich made of ':ab:'


def test_piped_xid_history_is_one_row_per_line(cache):
    r = cli("query", XID, "--name", "xid_history", env=cache)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "# xid_history"
    assert lines[1].split()[:4] == ["ts", "ts_aligned", "host", "gpu"]
    rows = lines[2:]
    assert len(rows) == 8  # one Xid 79, seven Xid 45: one line each, never wrapped
    assert "0000:ab:00.0" in rows[0] and "GPU has fallen off the bus." in rows[0]


def test_narrow_terminal_shows_vertical_records(cache):
    out = on_terminal(["query", XID, "--name", "xid_history"], 80, cache)
    assert "-[ record 1 ]" in out and "-[ record 8 ]" in out
    assert "pci_addr          | 0000:ab:00.0" in out
    assert "message           | NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." in out
    assert max(len(line) for line in out.splitlines() if "|" in line and "message" not in line) <= 80


def test_wide_terminal_shows_a_boxed_table_with_literal_cells(cache):
    out = on_terminal(["query", XID, "SELECT '0000:ab:00.0' AS a, 2 AS b"], 120, cache)
    assert "┏" in out and "0000:ab:00.0" in out and "\U0001f18e" not in out


def test_layout_choice_by_width():
    df = pl.DataFrame({"a": ["x" * 30], "b": ["y" * 30]})
    assert boxed_width([30, 30]) == 67  # "│ " + 30 + " │ " + 30 + " │"
    import io

    buf = io.StringIO()
    emit_table(df, file=buf, terminal=True, width=67)
    assert "┃" in buf.getvalue()
    buf = io.StringIO()
    emit_table(df, file=buf, terminal=True, width=66)
    assert buf.getvalue() == render_vertical(df, 66) and "a | " + "x" * 30 in buf.getvalue()


ESC_SQL = "SELECT 'Xid' || chr(27) || '[2J' || chr(27) || '[8m hidden' || chr(13) AS m, chr(7) AS bell"


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_query_table_shows_escapes_as_text(cache, tmp_path, fmt):
    r = hostile(["query", XID, ESC_SQL, "--format", fmt], tmp_path, cache=Path(cache["FORENSICS_CACHE_DIR"]), max_mb=500)
    if fmt == "table":
        assert "\x1b" not in r.out and "\x07" not in r.out and "\r" not in r.out
        assert "Xid\\x1b[2J\\x1b[8m hidden\\r" in r.out and "\\x07" in r.out
    elif fmt == "json":  # JSON escapes them itself; the data is unchanged
        assert json.loads(r.out)[0]["m"] == "Xid\x1b[2J\x1b[8m hidden\r"


def _escape_bundle(tmp_path: Path) -> Path:
    """A loose dmesg whose Xid line carries terminal escapes."""
    f = tmp_path / "dmesg.txt"
    f.write_bytes(b"[  100.000000] NVRM: Xid (PCI:0000:ab:00): 79, pid=1, name=python \x1b[2J\x1b[8mGPU has fallen off the bus.\x1b]0;owned\x07\n"
                  b"[  101.000000] mlx5_core 0000:1a:00.0 eth0: Link down\x1b[2J\n")
    return f


@pytest.mark.parametrize("args", [["analyze"], ["analyze", "--format", "md"], ["timeline"]])
def test_log_escapes_never_reach_the_terminal(tmp_path, args):
    f = _escape_bundle(tmp_path)
    if args[0] == "analyze":
        r = hostile([args[0], f, *args[1:], "--host", "n1"], tmp_path, max_mb=500, rc_ok=(0, 1))
    else:
        b = tmp_path / "b.tar"
        hostile(["bundle", f, "--host", "n1", "--out", b], tmp_path, max_mb=500, writes=[b])
        r = hostile(["timeline", b], tmp_path, max_mb=500)
    assert "\x1b" not in r.out + r.err and "\x07" not in r.out + r.err, r.out
    assert "\\x1b[2J" in r.out
    assert "GPU has fallen off the bus" in r.out  # the line is shown, only its escapes are made visible


INTERVALS = ("SELECT max(ts) - min(ts) AS span, map([1], ['a']) AS m, {'a': 1, 'i': INTERVAL 3 DAY} AS s, "
             "[1, 2] AS l, [{'x': 1}] AS ls, 'ab'::BLOB AS bl FROM kernel_log")


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "parquet"])
def test_interval_map_struct_list_results_in_every_format(cache, tmp_path, fmt):
    out = tmp_path / "r.parquet"
    r = hostile(["query", XID, INTERVALS, "--format", fmt, *(["--out", out] if fmt == "parquet" else [])], tmp_path,
                cache=Path(cache["FORENSICS_CACHE_DIR"]), max_mb=500, writes=[out])
    if fmt == "json":
        row = json.loads(r.out)[0]
        assert row["span"].startswith("30 days") and row["m"] == {"1": "a"} and row["l"] == [1, 2]
    elif fmt == "csv":
        assert r.out.splitlines()[0] == "span,m,s,l,ls,bl" and '"{""1"": ""a""}"' in r.out
    elif fmt == "parquet":
        assert pl.read_parquet(out)["span"][0].startswith("30 days")
