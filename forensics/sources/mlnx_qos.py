"""``mlnx_qos -i <iface>`` (NVIDIA/Mellanox ConnectX QoS) -> ``nic_qos``: one row per priority 0-7.

What mlnx_qos prints (MLNX_OFED / mstflint-era tools; every setter such as ``--trust dscp`` or
``--pfc 0,0,0,1,0,0,0,0`` prints the resulting configuration too)::

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:3 dscp:31,30,29,28,27,26,25,24,
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
            buffer      0   0   0   1   0   0   0   0
    tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%
             priority:  3

Each output (opened by ``DCBX mode:``, else ``Priority trust state:``, or by a collector marker)
gives eight rows: the priority's PFC flag, receive buffer, traffic class with its selection (ets,
strict, vendor), bandwidth share and rate limit, and its DSCP values. The interface comes from the
collector's marker argv, a pasted command (``mlnx_qos -i eth4 --trust dscp``, also after a shell's
``+ `` trace prefix), else ``ctx.hints["iface"]``. A block pasted with an indent (Markdown list) is
read; lines of other tools around it go to ``unparsed``.

>>> from forensics.sources import ParseContext
>>> sample = (b"+ mlnx_qos -i eth4 --pfc 0,0,0,1,0,0,0,0\\nDCBX mode: OS controlled\\nPriority trust state: dscp\\n"
...           b"PFC configuration:\\n        priority    0   1   2   3   4   5   6   7\\n"
...           b"        enabled     0   0   0   1   0   0   0   0   \\n"
...           b"tc: 3 ratelimit: unlimited, tsa: vendor\\n         priority:  3\\n")
>>> res = parse(sample, ParseContext(host="n1"))
>>> res.tables["nic_qos"].filter(priority=3).select("iface", "trust", "priority", "pfc_enabled", "tc", "tsa").rows()
[('eth4', 'dscp', 3, True, 3, 'vendor')]
>>> res.tables["nic_qos"].height, res.unparsed.height  # (the command line is not output)
(8, 1)
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, ParseResult, Sniff, drop_before_first_marker, marker_split, result, sniff_lines, split_lines, unparsed_rows
from forensics.sources._bounded import U32, bounded_int

NAME = "mlnx_qos"
VERSION = 2  # 2: a line with a value out of its dcbnl range (PFC priority/buffer 0-7, enabled 0/1, tc 0-7, bw 0-100%, u32 buffer sizes) is unparsed with the reason (before, a ComputeError lost the file)
TABLES = ("nic_qos",)
DESCRIPTION = "mlnx_qos -i IFACE: ConnectX trust mode, PFC per priority, ETS traffic classes, buffers, dscp2prio"
SNIFF_PRIORITY = 30

_TS = pl.Datetime("us", "UTC")
_CMD = re.compile(r"(?:^|[\s$#>/+])mlnx_qos\b.*?\s-i\s*=?\s*([A-Za-z0-9_.:@-]+)")
_DCBX = re.compile(r"^DCBX mode:\s*(.*?)\s*$", re.I)
_TRUST = re.compile(r"^Priority trust (?:state|mode):\s*(\S+)\s*$", re.I)
_DSCP_HDR = re.compile(r"^dscp2prio mapping:\s*$")
_DSCP = re.compile(r"^prio:\s*([0-7])\s+dscp:\s*([0-9,]*?),?\s*$")
_RXBUF = re.compile(r"^Receive buffer size \(bytes\):\s*(.*?)\s*$")
_CABLE = re.compile(r"^Cable len:\s*(\S+)\s*$")
_PFC_HDR = re.compile(r"^PFC configuration:\s*$")
_PFC_ROW = re.compile(r"^(priority|enabled|buffer)((?:\s+[0-9]+){8})\s*$")
_TC = re.compile(r"^tc:\s*([0-9]+)\s+ratelimit:\s*([^,]+),\s*tsa:\s*([a-z]+)(?:,\s*bw:\s*([0-9]+)%)?\s*$")
_TC_PRIO = re.compile(r"^priority:\s*([0-7])\s*$")
# the ranges of the dcbnl attributes mlnx_qos prints (include/uapi/linux/dcbnl.h): 8 priorities and traffic
# classes (IEEE_8021QAZ_MAX_TCS), 8 receive buffers (DCBX_MAX_BUFFERS) of u32 bytes, ETS bandwidth in percent;
# a line with a value outside them is not mlnx_qos output and goes to unparsed with the reason
_PFC_MAX = {"priority": 7, "enabled": 1, "buffer": 7}
_OTHER_KEYS = re.compile(r"^(?:tc_bw|up2tc|Xoff|Xon|Buffer size assigned)", re.I)


def sniff(head: bytes) -> Sniff:
    lines = [ln.strip() for ln in sniff_lines(head)]
    if not lines:
        return Sniff(0.0, "no lines")
    pfc = any(_PFC_HDR.match(s) for s in lines)
    key = any(_TRUST.match(s) or _DCBX.match(s) for s in lines)
    hits = sum(1 for s in lines if any(r.match(s) for r in (_DCBX, _TRUST, _DSCP_HDR, _DSCP, _RXBUF, _CABLE, _PFC_HDR,
                                                               _PFC_ROW, _TC, _TC_PRIO)))
    if not (pfc and key):
        return Sniff(0.0, "no 'Priority trust state' / 'DCBX mode' with a 'PFC configuration' table")
    rows = any(_PFC_ROW.match(s) for s in lines)
    conf = min(1.0, hits / len(lines) + 0.3)
    if rows:  # trust/DCBX line and a whole PFC table: mlnx_qos, whatever a script printed around it
        conf = max(conf, 0.6)
    return Sniff(round(conf, 3), f"{hits} of {len(lines)} lines are mlnx_qos output")


class _Block:
    def __init__(self, line_no: int, sample_no: int, ts, iface):
        self.first = line_no
        self.sample_no, self.ts, self.iface = sample_no, ts, iface
        self.dcbx = self.trust = None
        self.dscp: dict[int, str] = {}
        self.rxbuf: list[int] = []
        self.pfc: dict[str, list[int]] = {}
        self.pfc_line = None
        self.tc: dict[int, tuple] = {}
        self.cur_tc = None

    def rows(self) -> list[dict]:
        out = []
        enabled, buffers = self.pfc.get("enabled"), self.pfc.get("buffer")
        for p in range(8):
            tc = self.tc.get(p)
            buf = buffers[p] if buffers else None
            out.append({"line_no": self.pfc_line or self.first, "sample_no": self.sample_no, "ts": self.ts,
                        "iface": self.iface, "dcbx_mode": self.dcbx, "trust": self.trust, "priority": p,
                        "pfc_enabled": bool(enabled[p]) if enabled else None, "buffer": buf,
                        "tc": tc[0] if tc else None, "ratelimit": tc[1] if tc else None, "tsa": tc[2] if tc else None,
                        "bw_pct": tc[3] if tc else None, "dscp": self.dscp.get(p),
                        "buffer_bytes": self.rxbuf[buf] if buf is not None and buf < len(self.rxbuf) else None})
        return out


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    rows: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    hint = (ctx.hints or {}).get("iface")
    block: _Block | None = None
    sample = -1
    if n:
        df = marker_split(df)
        has_markers = bool(df["is_marker"].any())
        iface, ts = hint, (None if has_markers else cap)
        for line_no, text, is_marker, msample, mts, margv in drop_before_first_marker(df, bad).select(
                "line_no", "text", "is_marker", "sample_no", "sample_ts", "sample_argv").iter_rows():
            if is_marker:
                if block:
                    rows += block.rows()
                block = None
                m = _CMD.search(margv or "")
                iface, ts = (m.group(1) if m else hint), mts
                continue
            s = text.strip()
            if not s:
                continue
            m = _CMD.search(text)
            if m and not _DSCP.match(s):
                if block:
                    rows += block.rows()
                    block = None
                iface = m.group(1)
                bad.append((line_no, text, "shell prompt or command line, not mlnx_qos output"))
                continue
            opens = _DCBX.match(s) or (_TRUST.match(s) and (block is None or block.trust is not None))
            if opens:
                if block:
                    rows += block.rows()
                sample += 1
                block = _Block(line_no, sample, ts, iface)
            if block is None:
                bad.append((line_no, text, "not mlnx_qos output"))
                continue
            read = _line(block, line_no, s)
            if read is not True:
                bad.append((line_no, text, read or "not mlnx_qos output"))
        if block:
            rows += block.rows()
    cols = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "iface": pl.String, "dcbx_mode": pl.String,
            "trust": pl.String, "priority": pl.Int32, "pfc_enabled": pl.Boolean, "buffer": pl.Int32, "tc": pl.Int32,
            "ratelimit": pl.String, "tsa": pl.String, "bw_pct": pl.Int32, "dscp": pl.String, "buffer_bytes": pl.Int64}
    table = pl.DataFrame(rows, schema=cols, orient="row").with_columns(
        pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality"))
    if not rows:
        table = schema.empty("nic_qos")
    return result(NAME, ctx, n, {"nic_qos": table}, [unparsed_rows(bad, ctx, NAME)] if bad else [],
                  variant="table" if rows else ("empty" if not n else "unrecognised"), outputs=sample + 1)


def _line(b: _Block, line_no: int, s: str) -> bool | str:
    """Fold one stripped line into the block; False when it is no mlnx_qos line, the reason when it is one
    with a value out of its field's range (:data:`_PFC_MAX`, :data:`forensics.sources._bounded.U32`)."""
    if m := _DCBX.match(s):
        b.dcbx = m.group(1)
    elif m := _TRUST.match(s):
        b.trust = m.group(1).lower()
    elif _DSCP_HDR.match(s) or _PFC_HDR.match(s):
        pass
    elif m := _DSCP.match(s):
        b.dscp[int(m.group(1))] = m.group(2)
    elif m := _RXBUF.match(s):
        sizes = re.findall(r"(?:^|,)\s*([0-9]+)(?=,|$)", m.group(1))
        read = [bounded_int(x, *U32) for x in sizes]
        if not all(r.ok for r in read):
            return "receive buffer size beyond 32 bits (dcbnl buffer_size is a u32)"
        b.rxbuf = [r.value for r in read]
    elif _CABLE.match(s):
        pass
    elif m := _PFC_ROW.match(s):
        read = [bounded_int(x, 0, _PFC_MAX[m.group(1)]) for x in m.group(2).split()]
        if not all(r.ok for r in read):
            return f"PFC {m.group(1)} value out of range (0-{_PFC_MAX[m.group(1)]})"
        b.pfc[m.group(1)] = [r.value for r in read]
        if m.group(1) == "enabled":
            b.pfc_line = line_no
    elif m := _TC.match(s):
        tc, bw = bounded_int(m.group(1), 0, 7), bounded_int(m.group(4), 0, 100) if m.group(4) else None
        if not tc.ok or (bw is not None and not bw.ok):
            b.cur_tc = None  # (its priority lines are not read into the previous class)
            return "traffic class beyond 7 or ETS bandwidth beyond 100%"
        b.cur_tc = (tc.value, m.group(2).strip(), m.group(3), bw.value if bw is not None else None)
    elif (m := _TC_PRIO.match(s)) and b.cur_tc is not None:
        b.tc[int(m.group(1))] = b.cur_tc
    else:
        return False
    return True
