"""Out-of-range integers in untrusted files: every real fixture with each of its 1-4 digit numbers
rewritten to 99999999999999999999 (beyond Int64, "big") or 99999999999 (beyond Int32, "i32") is read
as ``forensics parse`` reads a file (recognition, then the parser) and either refused ("no source
recognises it") or parsed with exact line accounting: a number too large for its column is no
crash that loses the whole file, but a line in ``unparsed`` with its reason, or a null value where
the schema allows one. The rewrite is deterministic; all fixtures take ~10 s."""
from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from forensics.ingest.files import parse_path
from forensics.sources import ParseContext
from test_sources_conformance import check_accounting

FIXTURES = Path(__file__).parent / "fixtures"
_SKIP = (".json", ".md", ".parquet", ".gz", ".tar", ".zst")
_NUMBER = re.compile(rb"(?<![0-9A-Za-z.])[0-9]{1,4}(?![0-9A-Za-z.])")
BIG = b"99999999999999999999"  # > 2^64
I32 = b"99999999999"  # > 2^31, < 2^63


def _texts(folder: Path) -> list[Path]:
    return sorted(f for f in folder.iterdir() if f.is_file() and not f.name.endswith(_SKIP))


FOLDERS = sorted(d.name for d in FIXTURES.iterdir() if d.is_dir() and _texts(d))  # (flight_recorder: pickles, JSON)


def _parse(path: Path):
    """(res, None) or (None, the refusal) for the file at `path`, as ``forensics parse`` reads it."""
    try:
        return parse_path(path, None, ParseContext(host="h", file=str(path), tz="UTC"))[1], None
    except ValueError as e:
        if "no source recognises it" not in str(e):
            raise
        return None, str(e)


@pytest.mark.parametrize("mode", ["big", "i32"])
@pytest.mark.parametrize("folder", FOLDERS)
def test_numbers_beyond_their_columns_never_crash_a_parser(folder, mode, tmp_path):
    files = _texts(FIXTURES / folder)
    rewritten = 0
    for f in files:
        data = f.read_bytes()
        bad = _NUMBER.sub(BIG if mode == "big" else I32, data)
        if bad == data:
            continue
        rewritten += 1
        path = tmp_path / f.name  # (the name kept: some parsers read a device or port from it)
        path.write_bytes(bad)
        res, _ = _parse(path)
        if res is not None:
            check_accounting(res, bad, f"{f.name} ({mode})")
    assert rewritten, folder


def _one(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    res, refused = _parse(path)
    assert refused is None, refused
    check_accounting(res, text.encode(), name)
    return res


def _reasons(res) -> dict[int, str]:
    return dict(res.unparsed.select("line_no", "reason").iter_rows())


def test_an_infiniband_port_number_beyond_8_bits_is_no_port(tmp_path):
    base = "/sys/class/infiniband/mlx5_0/ports/{}/counters/symbol_error:4\n"
    res = _one(tmp_path, "counters.txt", base.format(1) + base.format(99999999999999) + base.format(256))
    assert res.tables["ib_counters"]["port"].to_list() == [1]
    reasons = _reasons(res)
    assert set(reasons) == {2, 3} and all("IBA PortNum" in r for r in reasons.values())


def test_an_ibstat_port_beyond_8_bits_leaves_its_lines_unparsed(tmp_path):
    text = ("CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 99999999999:\n\t\tState: Active\n"
            "\t\tRate: 200\n\tPort 1:\n\t\tState: Down\n")
    res = _one(tmp_path, "ibstat.txt", text)
    ports = res.tables["ib_ports"]
    assert ports.select("port", "state").rows() == [(1, "DOWN")]
    assert sorted(_reasons(res)) == [4, 5, 6]


def test_an_iostat_counter_beyond_int64_is_an_unparsed_line(tmp_path):
    text = ("Linux 3.10.0 (h) \t01/02/2020 \t_x86_64_\t(4 CPU)\n\n"
            "Device:            tps    kB_read/s    kB_wrtn/s    kB_read    kB_wrtn\n"
            "sda               1.00         2.00         3.00         40         50\n"
            "sdb               1.00         2.00         3.00 99999999999999999999         50\n")
    res = _one(tmp_path, "iostat.txt", text)
    assert res.tables["disk_io"]["device"].to_list() == ["sda"]
    assert "beyond a 64-bit integer" in _reasons(res)[5]


def test_a_pid_beyond_int64_is_null(tmp_path):
    text = ("kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"
            "wpa_supplicant[99999999999999999999]: rfkill: WLAN soft blocked\n"
            "wpa_supplicant[580]: rfkill: WLAN soft blocked\n")
    res = _one(tmp_path, "dmesg.txt", text)
    got = pl.concat([df.select("line_no", "pid") for df in res.tables.values() if "pid" in df.columns])
    assert dict(got.rows()).get(2, "missing") is None and dict(got.rows()).get(3) == 580


HUGE = "9" * 5000  # int() refuses a string of over 4,300 digits (ValueError, not the refusal)


def test_numbers_of_thousands_of_digits_are_out_of_range_not_a_crash(tmp_path):
    from forensics.sources.dmesg.events import events_python
    from forensics.sources.nvidia_smi.common import BadValue, integer
    from forensics.sources.slurm import _elapsed

    res = _one(tmp_path, "numactl.txt", f"available: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode {HUGE} cpus: 2 3\n")
    assert _reasons(res) == {3: "node number out of range"}
    ev = events_python([f"INFO: task kworker/0:1:{HUGE} blocked for more than 120 seconds."])
    assert ev.select("event", "task_pid").rows() == [("hung_task", None)]
    with pytest.raises(BadValue):
        integer(HUGE)
    assert _elapsed(f"{HUGE}-00:00:01") is None
