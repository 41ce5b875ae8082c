"""NVIDIA Fabric Manager's log (``/var/log/fabricmanager.log``) and its journal (``journalctl -u
nvidia-fabricmanager``) -> ``fabricmanager_log``: one row per record, with its time, level, thread,
message, what it reports (``event``) and the NVSwitch, port, GPU, partition and error code it names.

What Fabric Manager writes (R450-R580; the NMX-C fabric manager of GB200 racks writes the same
shape)::

    [Feb 27 2025 15:10:02] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61
    [Feb 25 2025 14:01:18] [INFO] [tid 1803] Received an inband message:  Message header details: magic Id:adbc request Id:73a12417a65c5380 status:0 type:2 length:56
    Message payload details:Team setup request: Allocation Size:60000000 Flags:0 Number of GPUs:8 GPU Handles:6319a3aba7f6e5de ...

A record is ``[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N] message``, read as the host's local time (``ctx.tz``)
with ``ts_quality`` ``local_zone_assumed``: the stamp carries no zone, and no document says which one
FM writes. Searched (2026-12-06, the search index's docs, pages and issues): NVIDIA's Fabric Manager
user guide (docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide, HTML and the PDF of release 2.3,
May 2025), issue trackers and pages that quote FM logs: none of what was returned states the zone. leptonai/gpud reads the same stamps as UTC
(components/accelerator/nvidia/fabric-manager/log_parser.go @aa6c9c2: Go's ``time.Parse`` with no
zone), an assumption of its own, not a statement of FM's. Local time is our assumption too: no real
log and journal of the same FM start were found to compare (the journal's ``-o short`` lines are local
by journald's definition; the simulator writes both in local time). On a host whose zone is not UTC,
if FM logs in UTC, these records are off by the zone's offset: the label says the zone is assumed;
lines without that prefix continue the record before them (payload lines, ``key : value`` blocks of
GPU NVL errors, a long line wrapped by a terminal) and are kept in ``detail``; blank lines between
records are structure. The journal holds the service's own lines (``nv-fabricmanager[pid]:``,
``nvidia-fabricmanager-start.sh[pid]:``, systemd's about the unit) in ``-o short`` (year from
``ctx.year`` or the capture: ``local_year_inferred``) or ``-o short-iso`` (exact); its ``-- Logs
begin/Boot/No entries --`` lines and an nvidia-bug-report's ``*** ls:`` line are structure. Other
lines, and continuation lines before any record, go to ``unparsed``.

``event`` (from the message; the wording of the real logs in tests/fixtures/fabricmanager):
``nvswitch_error`` (``detected NVSwitch [non-]fatal error <SXid> on fid F on NVSwitch pci bus id P
physical id N port K``; ``fatal`` says which), ``gpu_nvl_error`` (``Fabric Manager detected GPU NVL
[Non ]Fatal error on :`` and its block), ``multicast_failure`` (``failed to ...`` a multicast team:
an NVLink SHARP team a job's NCCL asked for was not set up or released), ``multicast`` (teams set
up and released), ``inband`` (the driver's requests and FM's responses; ``status`` is the
response's), ``fm_ready`` (``Successfully configured all the available NVSwitches``),
``fm_start_failed`` (the start script's, FM's or systemd's words for a start that failed),
``fm_service`` (started, stopping, stopped), ``port_down``, ``trunk_port_failure``, ``other``.

>>> from forensics.sources import ParseContext
>>> sample = (b"[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on "
...           b"NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33\\n")
>>> t = parse(sample, ParseContext(host="n1")).tables["fabricmanager_log"]
>>> t.select("level", "event", "fatal", "error_code", "switch_pci", "physical_id", "port").rows()
[('ERROR', 'nvswitch_error', True, 20034, '00000000:86:00.0', 3, 33)]
"""
from __future__ import annotations

import datetime as dt

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, ParseResult, Sniff, local_to_utc, result, sniff_lines, split_lines, unparsed_frame
from forensics.sources.dmesg.months import month_number

NAME = "fabricmanager"
VERSION = 3  # 3: a journal record's pid or a log record's tid past Int64 is null, the record kept (the strict cast lost the file); 2: the log file's records are ts_quality local_zone_assumed (were local)
TABLES = ("fabricmanager_log",)
DESCRIPTION = ("NVIDIA Fabric Manager log (/var/log/fabricmanager.log) and journal: NVSwitch fatal/non-fatal errors, "
               "GPU NVL errors, NVLink SHARP (multicast) team failures, start failures, port/trunk failures")
SNIFF_PRIORITY = 30

_TS = pl.Datetime("us", "UTC")
_FILE = (r"^\[(?P<mon>[A-Za-z]{3}) (?P<day>\d{1,2}) (?P<year>\d{4}) (?P<hms>\d{2}:\d{2}:\d{2})\] "
         r"\[(?P<level>[A-Z]+)\] \[tid (?P<tid>\d+)\] ?(?P<msg>.*)$")
_IDENTS = r"nv-fabricmanager|nvidia-fabricmanager-start\.sh|nvidia-fabricmanager|systemd"
_JOURNAL = (r"^(?:(?P<iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:?\d{2}|Z))|"
            r"(?P<jmon>\S{2,6}) +(?P<jday>\d{1,2}) (?P<jhms>\d{2}:\d{2}:\d{2})(?:\.\d+)?) "
            r"(?P<jhost>\S+) (?P<ident>" + _IDENTS + r")\[(?P<pid>\d+)\]: (?P<jmsg>.*)$")
_STRUCTURE = r"^(?:-- (?:Logs begin|Journal begins|Boot |No entries|Reboot)|\*\*\* ls: )"
_SYSTEMD_FM = r"(?i)fabric ?manager"

# event -> pattern on the message (first match wins; checked in this order)
_EVENTS = (
    ("nvswitch_error", r"detected NVSwitch (?:non-)?fatal error \d+"),
    ("gpu_nvl_error", r"detected (?:stale )?GPU NVL (?:Non[ -])?Fatal error"),
    ("multicast_failure", r"(?i)failed to .*multicast team"),
    ("multicast", r"(?:successfully (?:setup|released) multicast team|multicast group \d+ is (?:allocated|freed))"),
    ("inband", r"^(?:Received an inband message|Sending inband response message)"),
    ("fm_ready", r"Successfully configured all the available NVSwitches"),
    ("fm_start_failed", r"(?:request to query NVSwitch device information from NVSwitch driver failed|aborting fabric manager"
                        r"|nv-fabricmanager .*\" failed! Exit code|Failed to start NVIDIA fabric manager"
                        r"|nvidia-fabricmanager\.service: (?:Main|Control) process exited, code=exited, status=[1-9]"
                        r"|nvidia-fabricmanager\.service: Failed with result)"),
    ("fm_service", r"(?i)(?:^(?:Starting|Started|Stopping|Stopped) .*fabric.?manager|fabricmanager\.service: Deactivated)"),
    ("port_down", r"received port down event"),
    ("trunk_port_failure", r"Trunk port failure detected"),
)
_SXID = r"detected NVSwitch (non-fatal|fatal) error (\d+)(?: on fid (\d+))?(?: on NVSwitch pci bus id (\S+))?(?: physical id (\d+))?(?: port (\d+))?"


def sniff(head: bytes) -> Sniff:
    lines = sniff_lines(head)
    if not lines:
        return Sniff(0.0, "no lines")
    recs = pl.Series(lines, dtype=pl.String)
    file_hits = int(recs.str.contains(_FILE).sum())
    jr = recs.str.extract_groups(_JOURNAL)
    fm_idents = int(jr.struct.field("ident").is_in(["nv-fabricmanager", "nvidia-fabricmanager-start.sh"]).sum())
    journal_hits = int(jr.struct.field("ident").is_not_null().sum())
    if file_hits:
        return Sniff.ratio(file_hits, len(lines), "carry Fabric Manager's '[Mon DD YYYY hh:mm:ss] [LEVEL] [tid N]' prefix",
                           bonus=0.3)
    if fm_idents:
        return Sniff.ratio(journal_hits, len(lines), f"are journal lines of the fabric manager service ({fm_idents} of "
                                                     "nv-fabricmanager / its start script)", bonus=0.1)
    return Sniff(0.0, "no Fabric Manager log or journal line")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    n = lines.height
    if not n:
        return result(NAME, ctx, 0, {"fabricmanager_log": _empty()}, [], variant="empty")
    f = lines.with_columns(pl.col("text").str.extract_groups(_FILE).alias("f"),
                           pl.col("text").str.extract_groups(_JOURNAL).alias("j")).unnest("f", "j")
    is_file = pl.col("level").is_not_null()
    is_journal = pl.col("ident").is_not_null() & ((pl.col("ident") != "systemd") | pl.col("jmsg").str.contains(_SYSTEMD_FM))
    blank = pl.col("text").str.strip_chars() == ""
    structure = pl.col("text").str.contains(_STRUCTURE)
    f = f.with_columns((is_file | is_journal).alias("head"), blank.alias("blank"), structure.alias("structure"))
    f = f.with_columns(pl.col("head").cast(pl.Int64).cum_sum().alias("rec"))
    cont = ~pl.col("head") & ~pl.col("blank") & ~pl.col("structure") & pl.col("ident").is_null()
    reasons = (pl.when(pl.col("ident").is_not_null())
               .then(pl.lit("journal line of another program than the fabric manager service"))
               .otherwise(pl.lit("no Fabric Manager log or journal prefix, and no record before it to continue")))
    bad = f.filter(~pl.col("head") & pl.col("ident").is_not_null() | cont & (pl.col("rec") == 0))
    detail = (f.filter(cont & (pl.col("rec") > 0))
              .group_by("rec").agg(pl.col("text").sort_by("line_no").str.join("\n").alias("detail"),
                                   pl.len().alias("more")))
    heads = f.filter(pl.col("head")).join(detail, on="rec", how="left").sort("line_no")
    out = _records(heads, ctx)
    unparsed = [unparsed_frame(bad.select("line_no", "text", "ident"), reasons, ctx, NAME)] if bad.height else []
    variant = ("file" if heads["level"].is_not_null().any() else "journal") if heads.height else "unrecognised"
    return result(NAME, ctx, n, {"fabricmanager_log": out}, unparsed, variant=variant)


def _records(h: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    if h.height == 0:
        return _empty()
    file_naive = pl.concat_str([pl.col("year"), month_number(pl.col("mon")).cast(pl.String).str.zfill(2),
                                pl.col("day").str.zfill(2)], separator="-") + " " + pl.col("hms")
    year = _year(ctx)
    j_naive = (pl.concat_str([year, month_number(pl.col("jmon")).cast(pl.String).str.zfill(2),
                              pl.col("jday").str.zfill(2)], separator="-") + " " + pl.col("jhms")) if year is not None \
        else pl.lit(None, pl.String)
    naive = pl.coalesce(pl.when(pl.col("level").is_not_null()).then(file_naive), j_naive)
    local = local_to_utc(naive.str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="us"), ctx.tz)
    iso = pl.col("iso").str.replace(r"([+-]\d{2})(\d{2})$", "$1:$2").str.to_datetime(strict=False, time_unit="us",
                                                                                         time_zone="UTC")
    msg = pl.coalesce("msg", "jmsg")
    ev = pl.lit("other")
    for name, rx in reversed(_EVENTS):
        ev = pl.when(msg.str.contains(rx)).then(pl.lit(name)).otherwise(ev)
    sx = msg.str.extract_groups(_SXID)
    d = h.with_columns(
        ts=pl.coalesce(iso, local).cast(_TS),
        ts_quality=pl.when(pl.col("iso").is_not_null()).then(pl.lit("exact"))
        .when(pl.col("level").is_not_null()).then(pl.lit("local_zone_assumed"))
        .otherwise(pl.lit("local_year_inferred")),
        message=msg, event=ev, sx=sx,
        lines=1 + pl.col("more").fill_null(0),
    ).with_columns(pl.when(pl.col("ts").is_null()).then(pl.lit("none")).otherwise(pl.col("ts_quality")).alias("ts_quality"))
    blk = pl.col("detail")
    fatal = (pl.when(pl.col("event") == "nvswitch_error").then(pl.col("sx").struct.field("1") == "fatal")
             .when(pl.col("event") == "gpu_nvl_error").then(~pl.col("message").str.contains(r"Non[ -]Fatal"))
             .otherwise(None))
    return d.select(
        "line_no", "lines", "ts", "ts_quality",
        pl.col("level"), pl.col("tid").cast(pl.Int64, strict=False), pl.col("pid").cast(pl.Int64, strict=False), pl.col("ident"),
        pl.col("jhost").alias("host_in_log"),
        "message", "detail", "event", fatal.alias("fatal"),
        pl.coalesce(pl.col("sx").struct.field("2").cast(pl.Int64, strict=False),
                    _hex(blk.str.extract(r"(?m)^errorCode\s*:\s*(\S+)", 1))).alias("error_code"),
        _hex(blk.str.extract(r"(?m)^errorSubcode\s*:\s*(\S+)", 1)).alias("error_subcode"),
        pl.col("sx").struct.field("4").alias("switch_pci"),
        pl.col("sx").struct.field("5").cast(pl.Int32, strict=False).alias("physical_id"),
        pl.coalesce(pl.col("sx").struct.field("6").cast(pl.Int32, strict=False),
                    blk.str.extract(r"(?m)^portNum\s*:\s*(\d+)", 1).cast(pl.Int32, strict=False),
                    pl.col("message").str.extract(r"port num(?:ber)? (\d+)", 1).cast(pl.Int32, strict=False)).alias("port"),
        pl.col("sx").struct.field("3").cast(pl.Int32, strict=False).alias("fid"),
        pl.coalesce(blk.str.extract(r"(?m)^partitionId\s*:\s*(-?\d+)", 1),
                    pl.col("message").str.extract(r" in partition (-?\d+)", 1)).cast(pl.Int64, strict=False).alias("partition_id"),
        blk.str.extract(r"(?m)^gpuGuid\s*:\s*(0x[0-9A-Fa-f]+)", 1).alias("gpu_guid"),
        blk.str.extract(r"(?m)^moduleId\s*:\s*(\d+)", 1).cast(pl.Int32, strict=False).alias("module_id"),
        blk.str.extract(r"(?m)^nodeId\s*:\s*(\d+)", 1).cast(pl.Int32, strict=False).alias("node_id"),
        pl.col("message").str.extract(r"switch (?:with )?GUID (0x[0-9A-Fa-f]+)", 1).alias("switch_guid"),
        pl.when(pl.col("event") == "inband").then(pl.col("message").str.extract(r"\bstatus:(\d+)", 1).cast(pl.Int32, strict=False))
        .alias("status"),
    )


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema=schema.polars_schema("fabricmanager_log"))


def _hex(e: pl.Expr) -> pl.Expr:
    """'0x0E' / '14' -> 14 (Int64; null when neither)."""
    return pl.when(e.str.starts_with("0x") | e.str.starts_with("0X")).then(
        e.str.slice(2).str.to_integer(base=16, strict=False)).otherwise(e.cast(pl.Int64, strict=False))


def _year(ctx: ParseContext) -> pl.Expr | None:
    """Year of journal '-o short' times (none printed): --year, else the capture's (or the file's), a month
    after the capture's month being the year before."""
    if ctx.year is not None:
        return pl.lit(str(int(ctx.year)))
    cap = ctx.capture_time or (ctx.hints or {}).get("file_time")
    if not isinstance(cap, dt.datetime):
        return None
    return (pl.when(month_number(pl.col("jmon")) > cap.month).then(pl.lit(cap.year - 1))
            .otherwise(pl.lit(cap.year)).cast(pl.String))
