"""A run of 5,000 digits in each numeric field of a real fixture, one position at a time, for the parsers
whose fields were read with a bare int() or a strict cast (int() refuses strings of over 4,300 digits with
a ValueError; a polars cast of a number past Int64 raises), or with float() or a cast to Float64 (both read a
number past a double's range as inf): the file is parsed as ``forensics parse --source`` reads it, with exact
line accounting, and the line holding the run has one clear outcome: it is in ``unparsed``, or its rows hold
no integer the unchanged line did not give (the field is null, or the run was text such as a message) and no
table holds an infinite float the unchanged file did not: never a crash, never a smaller number or inf read
from it."""
from __future__ import annotations

import math
import re
from pathlib import Path

import polars as pl
import pytest

from forensics.ingest.files import parse_path
from forensics.sources import ParseContext
from test_sources_conformance import check_accounting

FIXTURES = Path(__file__).parent / "fixtures"
HUGE = b"9" * 5000
# fixed-width tables whose lines 5,000 characters longer are no table lines (unparsed, as they should be): a run
# of 400 digits (1e400, past a double's range: float() read it as inf) keeps the line one
SHORTER = {"nvidia_smi/nvidia_smi--table-processes-block-535-names-cut.txt": b"9" * 400,
           "nvidia_smi/nvidia_smi--arch-wiki-it-2012-290-nb-table-8500gt-md-escaped-index.txt": b"9" * 400}
_RUN = re.compile(rb"[0-9]+")

# (source, fixture, its lines read: a slice keeps a long fixture's run count small) per parser that had such a field
CASES = [
    ("ethtool", "ethtool/ethtool--netdata988-echo-ifconfig-then-S-e1000e.txt", None),  # _link_stats: ifconfig
    ("nvlink", "nvlink/nvlink--errors-mlengineering-h100-elided-prompt.txt", None),  # nvlink -e counters
    ("fabricmanager", "fabricmanager/fabricmanager--cube-studio29-journal-start-failed.txt", None),  # journal pid
    ("dmesg", "dmesg/dmesg--linux-pci-mail-flowed-kmsg-dict-r8169.txt", slice(92, 105)),  # kmsg user records
    ("nccl_ras", "nccl_ras/nccl_ras--docs-mismatch-operation-counts-outlier-ranks.txt", None),  # operation counts
    ("nccl_ras", "nccl_ras/nccl_ras--docs-2.29.1-json-missing-rank.json", None),  # JSON numbers
    ("mlxlink", "mlxlink/mlxlink--bluefield3-100g-dac-two-ports-m-c-prompts.txt", slice(0, 30)),  # command's -p
    ("infiniband", "infiniband/infiniband--ibstat-gpud-a100-ibpanic.txt", slice(0, 17)),  # ibstat base/SM lid, rate
    # fields read with float() or a cast to Float64: a run of hundreds of digits read as inf
    ("dcgm_dmon", "dcgm_dmon/dcgm_dmon--llm-action-h800-dcgm318-nvlink-pcie-na-prompt.txt", None),  # cell values
    ("dmesg", "dmesg/dmesg--netdev-mlx5-fatal-syndrome-hung-task-recovery-aborted.txt", slice(12, 20)),  # boot_s, duration_s
    ("nvlink", "nvlink/nvlink--status-mlengineering-h100-elided-prompt.txt", None),  # speed_gbps
    ("train_log", "train_log/train_log--megatron-issue756-mixtral-h100-timestamped.txt", None),  # step time, TFLOP/s, loss
    ("train_log", "train_log/train_log--deepspeed-issue3742-megatron-deepspeed-samples-sec.txt", None),  # epoch, samples/s
    ("train_log", "train_log/train_log--torchtitan-pr3393-rank0-prefix.txt", None),  # loss, tps, tflops, mfu
    ("train_log", "train_log/train_log--hf-trainer-tf-pr9613-logged-steps.txt", None),  # loss, epoch
    ("train_log", "train_log/train_log--lightning-issue4225-tqdm-s-per-it-loss-vnum.txt", None),  # bar loss
    ("nccl", "nccl/nccl--awsdoeks-mpi-tag-output-efa-nvls-nccltests.txt", slice(3, 8)),  # nccl-tests times, bandwidths
    ("numactl", "numactl/numactl--rrze-naples-epyc7451-8node.txt", slice(25, 30)),  # distance matrix header
    ("nvidia_smi", "nvidia_smi/nvidia_smi--csv-noheader-index-used-total-util-2gpu.csv.txt", None),  # shape by values
    ("nvidia_smi", "nvidia_smi/nvidia_smi--csv-column-t-aligned-3gpu-2018-blog.csv.txt", None),  # query csv
    ("nvidia_smi", "nvidia_smi/nvidia_smi--table-processes-block-535-names-cut.txt", None),  # table's process memory
    ("nvidia_smi", "nvidia_smi/nvidia_smi--arch-wiki-it-2012-290-nb-table-8500gt-md-escaped-index.txt", None),  # old table
    ("nvidia_smi", "nvidia_smi/nvidia_smi--q-d-clock-6gpu-398-windows-prompt.txt", None),  # -q values
]


def _parse(path: Path, source: str):
    """As ``forensics parse FILE --source S`` reads it (a run may cost the file its recognition)."""
    return parse_path(path, source, ParseContext(host="h", file=str(path), tz="UTC"))[1]


def _infinite(res) -> set:
    """(table, column) of every float column of `res` holding an infinite value (a row may stand for
    several lines, as an ibstat port does: its line_no is the port's)."""
    return {(t, c) for t, df in res.tables.items() for c, d in df.schema.items()
            if d.is_float() and df.select(pl.col(c).is_infinite().any()).item()}


def _numbers(res, line_no: int) -> list:
    """The integer and float values of the rows `res` read from line `line_no`."""
    out = []
    for df in res.tables.values():
        if "line_no" not in df.columns:
            continue
        cols = [c for c, d in df.schema.items() if (d.is_integer() or d.is_float()) and c not in ("line_no", "sample_no")]
        for row in df.filter(pl.col("line_no") == line_no).select(cols).iter_rows():
            out += [v for v in row if v is not None]
    return out


@pytest.mark.parametrize(("source", "name", "part"), CASES, ids=[f"{s}-{n.rsplit('--', 1)[1][:32]}" for s, n, _ in CASES])
def test_a_5000_digit_run_in_each_numeric_field_is_null_or_an_unparsed_line(source, name, part, tmp_path):
    data = (FIXTURES / name).read_bytes()
    if part is not None:
        data = b"\n".join(data.split(b"\n")[part]) + b"\n"
    path = tmp_path / Path(name).name  # (the name kept: some parsers read a device or port from it)
    path.write_bytes(data)
    base = _parse(path, source)
    runs = list(_RUN.finditer(data))
    assert runs
    outcomes = {"unparsed": 0, "null": 0}
    for m in runs:
        bad = data[:m.start()] + SHORTER.get(name, HUGE) + data[m.end():]
        path.write_bytes(bad)
        res = _parse(path, source)  # (no exception: the file is not lost)
        check_accounting(res, bad, f"{name} digits at {m.start()}")
        assert not _infinite(res) - _infinite(base), f"{name} digits at {m.start()}: inf in {_infinite(res)}"
        line_no = data[:m.start()].count(b"\n") + 1
        if line_no in set(res.unparsed["line_no"].to_list()) - set(base.unparsed["line_no"].to_list()):
            outcomes["unparsed"] += 1
            continue
        was = _numbers(base, line_no)
        for v in _numbers(res, line_no):  # (a float may round a longer fraction: finite is enough)
            assert v in was or (isinstance(v, float) and math.isfinite(v)), (
                f"{name} line {line_no}: {v!r} read from a run of 5,000 digits (the line gave {was})")
        outcomes["null"] += len(_numbers(res, line_no)) < len(was)
    assert outcomes["unparsed"] + outcomes["null"] > 0, outcomes  # (some run was a number the parser reads)


H = "9" * 5000


def _text(source: str, text: str, **hints):
    from forensics.sources import parse_bytes
    data = text.encode()
    res = parse_bytes(data, source, ParseContext(host="h", file="x", tz="UTC", hints=hints or None))[1]
    check_accounting(res, data, source)
    return res


def test_nccl_ras_counts_and_ids_past_their_columns_are_null():
    # the text report's operation counts take 19 digits (past Int64 from 9,223,372,036,854,775,808); the JSON
    # report's numbers have no size: each was a crash building the table (the file lost)
    text = (FIXTURES / "nccl_ras/nccl_ras--docs-mismatch-operation-counts-outlier-ranks.txt").read_text()
    res = _text("nccl_ras", text.replace("  Rank 0 -- GPU 0", "  Rank 0 has launched up to operation " + "9" * 19
                                         + " -- GPU 0").replace("operation 6649", "operation " + "9" * 19))
    got = res.tables["nccl_ras"].select("rank", "ops_launched").rows()
    assert got[0] == (0, None) and all(ops is None for _, ops in got) and res.unparsed.height == 0
    doc = (FIXTURES / "nccl_ras/nccl_ras--docs-2.29.1-json-missing-rank.json").read_text()
    big = re.sub(r'"pid": *[0-9]+', '"pid": ' + "9" * 30, re.sub(r'"rank": *[0-9]+', '"rank": ' + "9" * 12, doc, count=1), count=1)
    rows = _text("nccl_ras", big).tables["nccl_ras"]
    assert rows["pid"][0] is None and rows["rank"][0] is None and rows.height == 2


def test_a_dcgmi_dmon_delay_of_thousands_of_digits_is_no_delay():
    from forensics.sources.dcgm_dmon import delay_ms
    assert delay_ms(["dcgmi", "dmon", "-d", H]) is None and delay_ms(["dcgmi", "dmon", "-d", "100"]) == 100
    assert delay_ms(["dcgmi", "dmon", "-d", str(1 << 31)]) is None  # (dcgmi reads it into a C int)


def test_a_time_report_with_thousands_of_digits_stays_unparsed():
    from forensics.sources._shell import take_shell_lines
    block = ["real\t" + H + "m0.022s", "user\t0m0.001s", "sys\t0m0" + "9" * 400 + ".011s"]
    for bad in (block, [block[0].replace(H, "0"), block[1], block[2]]):
        unparsed = pl.DataFrame({"line_no": [1, 2, 3], "text": bad})
        left, meta = take_shell_lines(unparsed, "numactl")
        assert meta == {} and left.height == 3
    ok = pl.DataFrame({"line_no": [1, 2, 3], "text": ["real\t1m0,5s", "user\t0m0.001s", "sys\t0m0.011s"]})
    assert take_shell_lines(ok, "numactl")[1]["shell_time"][0]["real_s"] == 60.5


def test_a_port_hint_or_lid_of_thousands_of_digits_is_none():
    from forensics.sources._ib_ports import _lid
    assert _lid(H) is None and _lid("12") == 12 and _lid("0x1f") == 31
    # the BlueField-3 fixture without its command lines: the port comes from the hint (a bundle's, untrusted)
    lines = (FIXTURES / "mlxlink/mlxlink--bluefield3-100g-dac-two-ports-m-c-prompts.txt").read_text().split("\n")
    body = "\n".join(ln for ln in lines if " -d " not in ln)
    assert _text("mlxlink", body, port="3").tables["mlxlink"]["port"].unique().to_list() == [3]
    out = _text("mlxlink", body, port=H).tables["mlxlink"]
    assert out.height == 150 and out["port"].unique().to_list() == [None]


def test_a_kmsg_user_record_followed_by_a_continuation_line_is_read():
    # a /dev/kmsg record of another facility (syslog table) with a continuation line: the syslog rows had a
    # journal "dev" column the continuation lacked (a crash, the file lost; found by a digit run that
    # turned a kernel record's priority into no priority)
    res = _text("dmesg", "6,1,100,-;r8169 0000:0a:00.0 enp10s0: link up\n SUBSYSTEM=pci\n DEVICE=+pci:0000:0a:00.0\n"
                "47,2,200,-;systemd-journald[301]: Sent WATCHDOG=1 notification.\n  a continuation of it\n")
    assert res.tables["syslog"].select("line_no", "message").rows() == [
        (4, "Sent WATCHDOG=1 notification."), (5, "a continuation of it")]
    assert res.tables["kernel_log"]["pci_addr"].to_list() == ["0000:0a:00.0"]


def test_a_flight_recorder_duration_past_a_double_is_null():
    # a JSON number of hundreds of digits: as an integer float() raised (OverflowError: the file lost), as a
    # decimal or 1e999 json read it as inf
    doc = (FIXTURES / "flight_recorder/flight_recorder--torch2.13-gloo-3ranks-rank0.json").read_text()
    for dur, want in (("9" * 400, None), ("9" * 400 + ".5", None), ("1e999", None), ("12.5", 12.5)):
        res = _text("flight_recorder", doc.replace('"record_id"', f'"duration_ms": {dur}, "record_id"', 1))
        got = next(t for t in res.tables.values() if "duration_ms" in t.columns)["duration_ms"]
        assert got[0] == want and got.is_infinite().sum() == 0, dur


def test_an_iostat_interval_hint_that_is_no_number_of_seconds_is_no_interval():
    # a bundle's hint (untrusted): a run of digits, inf, 1e300, a list lost the file; a negative one put the
    # reports before the capture
    import datetime as dt
    from forensics.sources import parse_bytes
    data = (FIXTURES / "iostat/iostat--centos77-basic-3-reports.txt").read_bytes()
    cap = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    for iv, want in ((H, "none"), (float("inf"), "none"), (10 ** 400, "none"), (1e300, "none"), ([1], "none"),
                     (-5, "none"), ("2", "sampled"), (2, "sampled")):
        ctx = ParseContext(host="h", file="x", tz="UTC", capture_time=cap, hints={"interval_s": iv})
        rows = parse_bytes(data, "iostat", ctx)[1].tables["disk_io"]
        assert rows.height and rows["ts_quality"].unique().to_list() == [want], str(iv)[:10]
    assert rows["ts"].max() == cap + dt.timedelta(seconds=4)
