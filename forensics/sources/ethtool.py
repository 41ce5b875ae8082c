"""ethtool -S (NIC statistics) -> ``nic_counters``: one row per (snapshot, interface, counter).

Reads what ``ethtool -S IFACE`` prints (``NIC statistics:`` then ``     name: value`` lines, the
value an unsigned 64-bit integer) as real drivers name their counters, and the ways people save it:

* the header present or absent, the 5-space indentation present or stripped, names padded with
  spaces before the colon by the driver (``TxOctetsOK          : 0``; trimmed);
* mlx5 (``rx_prio3_pause``, ``tx_pause_storm_error_events``, ``rx_discards_phy``, per-channel
  ``ch0_*``/``rx0_*``/``tx0_*``, old ``tx0_0_*``), ice (``rx_bytes.nic``, ``tx_priority_3_xoff.nic``),
  i40e/iavf/sfc (``tx-0.tx_packets``, ``rx-3.bytes``, ``port.*``, ``veb.*``), ixgbe/igb/virtio_net
  (``rx_queue_0_packets``), ena (``queue_0_tx_cnt``), bnxt_en/bnx2x (``[0]: rx_ucast_packets``),
  be2net (``rxq0: rx_bytes``), vmxnet3 (``Tx Queue#: 0`` sections of indented counters), dpaa2
  (``[hw] rx frames``);
* repeated snapshots each preceded by the collector's marker line
  (``#### forensics-sample ts=... argv="ethtool -S eth2"``, see :mod:`forensics.layout`):
  ``sample_no`` from the marker, ``ts`` = the marker's time (``ts_quality`` "sampled"), ``iface``
  from its argv;
* excerpts pasted into tickets: a shell command line (a prompt or nothing before it, only options, a pipe
  or a redirection after it: a sentence naming the command is prose; ``# ethtool -S eth03 | grep -i pause``,
  ``user@host:~$ sudo ethtool -S p3p1``, ``grep pause sos_commands/networking/ethtool_-S_eth1``)
  is structure, not data: it gives the interface of the lines below it and starts a new snapshot;
  ``watch`` headers (``Every 1.0s: ethtool -S eth1   Tue Apr 16 08:23:27 2013``) also give the
  snapshot's local time (``ts_quality`` "local", converted with ``ctx.tz``). ``ifconfig`` and
  ``ip -s link`` blocks pasted with the counters go to ``link_stats`` (:mod:`forensics.sources._link_stats`),
  their lines without counters skipped (meta ``skipped``). Other text (labels, other commands'
  output) goes to ``unparsed`` with a reason.

Without markers the input is one snapshot per command line (or one in all): ``ts`` =
``ctx.capture_time`` ("sampled") or null ("none"); ``iface`` from the marker argv, else the command
line, else ``ctx.hints["iface"]``, else a sosreport file name ``ethtool_-S_IFACE``, else null.

Counter names are split into a queue-free ``counter`` and ``queue`` by
:mod:`forensics.sources._ethtool_names`; a snapshot's time and interface are read from markers,
command lines, watch headers and file names by :mod:`forensics.sources._ethtool_snapshot`.

How it runs: every line is split once at its first ``": "`` and the value cast to u64 in polars;
names are normalised once per distinct spelling (a few thousand in a 100 MB series) and joined
back; only the rare other lines (headers, commands, ``[0]: x: 1`` prefixes, junk) take a slower
path, and Python touches only command and marker lines. A marker series is parsed in blocks of
whole snapshots (``BLOCK_BYTES``), so memory stays bounded by the output, not by the input.

Values must be unsigned decimal integers; ``N/A``/``[N/A]``/``[Not Supported]`` become null on
purpose; a value above 2^63-1 (the int64 column; ethtool prints u64) or any other text goes to
``unparsed`` with its reason.

>>> from forensics.sources import ParseContext
>>> sample = (b"NIC statistics:\\n"
...           b"     [0]: rx_ucast_packets: 10198513532\\n"
...           b"     rx_pfc_ena_frames_pri3: 0\\n"
...           b"     rx0_xdp_drop: 3753342954\\n"
...           b"rx_queue_1_bytes: 4819127125\\n")
>>> res = parse(sample, ParseContext(host="n1", hints={"iface": "eth0"}))
>>> for row in res.tables["nic_counters"].select("line_no", "iface", "counter", "queue", "value").rows():
...     print(row)
(2, 'eth0', 'rx_ucast_packets', 0, 10198513532)
(3, 'eth0', 'rx_pfc_ena_frames_pri3', None, 0)
(4, 'eth0', 'rx_xdp_drop', 0, 3753342954)
(5, 'eth0', 'rx_bytes', 1, 4819127125)
>>> res.lines, res.unparsed.height, res.tables["nic_counters"]["ts_quality"][0]
(5, 0, 'none')
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics import schema
from forensics.layout import MARKER_PREFIX, parse_marker
from forensics.sources._base import (
    BEFORE_FIRST_MARKER,
    RE_MAIL_QUOTE,
    ParseContext,
    ParseResult,
    head_text,
    result,
    split_lines,
    unparsed_frame,
)
from forensics.sources import _ethtool_collapsed as collapsed
from forensics.sources import _link_stats as link_stats
from forensics.sources._ethtool_names import join_names
from forensics.sources._ethtool_paste import MAX_NOTES, pasted_snapshots, repair_paste
from forensics.sources._ethtool_snapshot import CMD, PROMPT_HOST, command_at, hint_iface, snapshot_markers, watch_ts

NAME = "ethtool"
VERSION = 11  # 11: a command run in a network namespace ("nsenter -t PID -n ethtool -S eth0", "ip netns exec NAME ethtool -S ...": shared _shell runners) is a command line naming its interface (it was unparsed and its counters had no interface); a new real fixture; 10: a reply whose attribution line stands above a short quoted block of counters (paste layer _quote 11, 5105b75) is read (new fixture; the parser itself is unchanged, the bump re-parses caches of such pastes); 9: the header and the counters on one line ("NIC statistics: rx_packets: 1 tx_packets: 2 ...": a page lost the line breaks) are read as the lines ethtool printed, every row on that line (was not recognised); 8: a sentence that names `ethtool -S IFACE` ("ethtool -S eth0 provides a lot of statistics.") is prose, not a command line: it names no interface and goes to unparsed (it set iface); 7: an author's note after a value ("rx_dropped: 123  # growing", "<-- here") is taken off (meta notes) and the value read; a paste of several snapshots with no ethtool command between them ("NIC statistics:" again, or a label or "$ sleep 10" after which counter names repeat) gives one sample_no each (they were one sample); 6: an ifconfig / ip -s link counter of any run of digits past int64 leaves its line unparsed (int() refused over 4,300 digits: the file was lost); 5: a paste's tab after the colon ("rx_packets:\t333") is read as ": ", and a value a mail client wrapped onto the next line is joined back to its name (features paste-repaired, wrapped-values; before, both were unparsed); 4: the ifconfig / ip command lines above those blocks go to meta commands (not unparsed), iproute2 6.x "heartbt"; 3: ifconfig / ip -s link blocks pasted with the counters -> link_stats; 2: an `ethtool -i` block (driver, firmware, bus-info) and its command line are read into meta
TABLES = ("nic_counters", "link_stats")
DESCRIPTION = "ethtool -S NIC counters (mlx5, ice, i40e, ixgbe, bnxt, virtio, ...), marker series and ticket excerpts"
SNIFF_PRIORITY = 40

INT64_MAX = (1 << 63) - 1
NA_VALUES = ("N/A", "[N/A]", "[Not Supported]", "Not Supported")

# sniffing: a counter line as ethtool prints it (names without inner spaces may be padded).
_SNIFF_COUNTER = re.compile(
    r"^[ \t]*(?:\[[0-9]+\]: |[rt]xq[0-9]+: |\[[a-z]+\] )?"
    r"(?:[A-Za-z0-9_.\-]+[ \t]*|[A-Za-z0-9_.\-#]+(?: [A-Za-z0-9_.\-#]+)+):(?: |[ \t]*\t[ \t]*)[0-9]+"
    r"(?:[ \t]*|[ \t]+(?:#|<-|<=|<<|←|//|--|->|=>|\(|\[|\*|!|\^|\?).*)$")  # (a note after it: _ethtool_paste)
# a counter whose value a mail client wrapped onto the next line: the name line, then the value alone
_SNIFF_WRAP_NAME = re.compile(r"^[ \t]*[A-Za-z0-9_.\-]+:$")
_SNIFF_WRAP_VALUE = re.compile(r"^[ \t]*[0-9]+[ \t]*$")
_SNIFF_QHDR = re.compile(r"^[ \t]*[RT]x Queue#: [0-9]+[ \t]*$")
_QUOTE = re.compile(RE_MAIL_QUOTE)


def sniff(head: bytes) -> bool:
    """True for ethtool -S output: header, marker series, command excerpts, or bare counter lines."""
    text = head_text(head)
    lines = text.splitlines()[:400]
    if not lines:
        return False
    counters = cmds = nonblank = other = 0
    in_block = False  # inside an ifconfig / ip -s link block pasted with the counters (not weighed)
    wrap_name = False  # the line before was a counter's name alone (its value wrapped onto this line?)
    signs = link_stats.looks_present(head)
    for ln in lines:
        if ln.startswith(">"):  # quoted in a mail reply
            ln = _QUOTE.sub("", ln)
        s = ln.strip()
        if not s:
            in_block = False
            continue
        nonblank += 1
        if signs and (link_stats.head_iface(ln) or (in_block and (ln[:1].isspace() or link_stats.is_wrapped_head(ln)))):
            in_block, other = True, other + 1
            continue
        if signs and "ethtool" not in s and link_stats.is_command(s):
            in_block, other = False, other + 1
            continue
        in_block = False
        if s == "NIC statistics:" and nonblank - other <= 40:
            return True
        if "NIC statistics:" in s and collapsed.looks_collapsed(s):  # the counters on the header's line
            return True
        if ln.startswith(MARKER_PREFIX):
            m = parse_marker(ln)
            if m and m[1] and CMD.search(m[1]):
                return True
            continue
        if _SNIFF_COUNTER.match(ln) or _SNIFF_QHDR.match(ln):
            counters += 1
        elif "ethtool" in s and CMD.search(s):
            cmds += 1
        elif wrap_name and _SNIFF_WRAP_VALUE.match(ln):
            counters += 2  # the name line before and this value
        wrap_name = bool(_SNIFF_WRAP_NAME.match(ln))
    nonblank -= other
    if cmds and counters >= 1 and counters >= 0.6 * (nonblank - cmds):
        return True
    return counters >= 3 and counters >= 0.9 * nonblank


_MARKER_B = MARKER_PREFIX.encode()
BLOCK_BYTES = 8 << 20  # a big series is parsed a run of whole snapshots at a time: bounded memory
_TS = pl.Datetime("us", "UTC")


SPLIT_IN_POLARS_MAX = 4 << 20


def _split_lines(data: bytes) -> pl.DataFrame:
    """split_lines(data), the text split by polars' str.split: about half the work of Python's split
    into strings (small inputs) and of the CSV reader plus its line count, for inputs up to
    SPLIT_IN_POLARS_MAX (one interface's file of a collected bundle); bigger blocks of a series go
    to split_lines (the CSV reader: less memory, two threads)."""
    if not data or len(data) > SPLIT_IN_POLARS_MAX:
        return split_lines(data)
    text = data.decode("utf-8", errors="replace")
    parts = pl.Series("text", [text], dtype=pl.String).str.split("\n").explode()
    if text.endswith("\n"):
        parts = parts.head(-1)
    df = pl.DataFrame({"line_no": pl.int_range(1, len(parts) + 1, eager=True, dtype=pl.Int64), "text": parts})
    if "\r" in text:
        df = df.with_columns(pl.col("text").str.strip_suffix("\r"))
    return df


def _value_reason(v: pl.Expr) -> pl.Expr:
    """Why a value (already stripped) is not a usable counter value."""
    return (pl.when(v.is_null()).then(pl.lit("not a 'name: value' counter line"))
            .when(v == "").then(pl.lit("no value after the colon"))
            .when(v.str.contains(r"^[0-9]+$")).then(pl.lit("value above 2^64-1 (not a u64 counter)"))
            .otherwise(pl.lit("value is not an unsigned integer")))


# the hot path over every line (see _parse_block)
_LINE_STEPS = [
    [pl.col("text").str.starts_with(MARKER_PREFIX).alias("is_marker"),
     pl.col("text").str.find(": ", literal=True).cast(pl.Int64).alias("pos")],
    [pl.col("text").str.head(pl.col("pos")).alias("k"), pl.col("text").str.slice(pl.col("pos") + 2).alias("v")],
    [pl.col("v").cast(pl.UInt64, strict=False).alias("u"), pl.col("v").is_in(list(NA_VALUES)).alias("is_na")],
    [(((pl.col("u").is_not_null() & ~pl.col("v").str.starts_with("+")) | pl.col("is_na")).fill_null(False)
      & ~pl.col("is_marker")).alias("fast")],
]
_OTHER = ~pl.col("fast") & ~pl.col("is_marker")
_OBODY = pl.col("text").filter(_OTHER).str.strip_chars(" \t")
# what a block holds, in one pass, to skip the steps that would find nothing (a False is always
# right, a True may be conservative); and the distinct names of its counter lines
_FLAGS = [
    pl.col("is_marker").sum().alias("markers"),
    (pl.col("sample_no") < 0).any().alias("before"),
    (pl.col("fast") & (pl.col("u") > INT64_MAX) & ~pl.col("is_na")).fill_null(False).any().alias("too_big"),
    pl.col("text").filter(_OTHER).str.contains("ethtool", literal=True).any().alias("cand"),
    (~_OBODY.is_in(["", "NIC statistics:"])).any().alias("slow"),
    ((_OBODY == "NIC statistics:") & (pl.col("sample_no").filter(_OTHER) >= 0)).any().alias("header"),
    (_OBODY == "NIC statistics:").sum().alias("headers"),
]


def _bad_rows(rows: pl.DataFrame, df: pl.DataFrame, ctx: ParseContext, unparsed: list[pl.DataFrame]) -> pl.DataFrame:
    """Counter rows whose name is unusable or whose value does not fit int64 go to `unparsed`."""
    too_big = (pl.col("u") > INT64_MAX) & ~pl.col("is_na")
    bad = rows.filter(pl.col("name_reason").is_not_null() | too_big)
    if bad.height:
        reason = pl.coalesce(pl.col("name_reason"), pl.lit("value above 2^63-1 does not fit the int64 column"))
        unparsed.append(unparsed_frame(
            bad.join(df.select("line_no", "text"), on="line_no", how="left"), reason, ctx, NAME))
        rows = rows.filter(pl.col("name_reason").is_null() & ~too_big)
    return rows


def _simple_block(df: pl.DataFrame, rows: pl.DataFrame, flags: dict, ctx: ParseContext, has_markers: bool,
                  sample_offset: int, unparsed: list[pl.DataFrame], features: set[str]) -> pl.DataFrame:
    """_parse_block's rows when the block holds only counter lines (`rows`: joined with their names),
    markers, blank lines and headers (the collector's series): what the general steps make of it, in
    a few queries."""
    if flags["header"]:
        features.add("header")
    if flags["too_big"] or rows["name_reason"].null_count() < rows.height:
        rows = _bad_rows(rows, df, ctx, unparsed)
    hint = pl.lit(hint_iface(ctx), dtype=pl.String)
    if has_markers:
        m_ts, m_iface, bad = snapshot_markers(df.filter(pl.col("is_marker")).select("line_no", "text"))
        if bad:
            unparsed.append(unparsed_frame(df.filter(pl.col("line_no").is_in(bad)),
                                           "malformed forensics-sample marker line", ctx, NAME))
        ts = pl.lit(m_ts).gather(pl.col("sample_no"))
        sample_no = pl.col("sample_no") + sample_offset
        quality = pl.when(ts.is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none"))
        iface = pl.coalesce(pl.lit(m_iface).gather(pl.col("sample_no")), hint)
    else:
        cap = ctx.capture_time
        if cap is not None and cap.tzinfo is None:
            cap = cap.replace(tzinfo=dt.timezone.utc)
        ts = pl.lit(cap, dtype=_TS)
        sample_no = pl.col("sample_no")
        quality = pl.lit("sampled" if cap is not None else "none")
        iface = hint
    return rows.select(
        pl.col("line_no"),
        sample_no.alias("sample_no"),
        ts.alias("ts"),
        quality.alias("ts_quality"),
        iface.alias("iface"),
        pl.col("counter"),
        pl.col("queue"),
        pl.col("raw_name"),
        pl.when(pl.col("is_na")).then(None).otherwise(pl.col("u")).cast(pl.Int64).alias("value"),
    )


# `ethtool -i IFACE` (driver information, often pasted above `ethtool -S`): its fields as ethtool prints
# them ("%s: %s" for each, unindented; ethtool.c dump_drvinfo) and its command line
_DRVINFO_KEYS = ("driver", "version", "firmware-version", "expansion-rom-version", "bus-info", "supports-statistics",
                 "supports-test", "supports-eeprom-access", "supports-register-dump", "supports-priv-flags")
_DRVINFO = r"^(" + "|".join(re.escape(k) for k in _DRVINFO_KEYS) + r"):(?: (.*))?$"
_DRVINFO_CMD = r"(?:^|[^A-Za-z0-9_])ethtool(?:[ \t]+-[A-Za-z-]+)*?[ \t]+(?:-i|--driver)[ \t]+([A-Za-z0-9_.:@-]+)"


def _driver_info(slow: pl.DataFrame, features: set[str], info: list[dict]) -> pl.DataFrame:
    """Take the `ethtool -i` blocks out of `slow` (line_no, text, body): each block (a `driver:` line and
    the driver-information fields after it, with the `ethtool -i IFACE` line above it when pasted) goes
    to `info` as one dict (line_no, iface, driver, version, firmware_version, bus_info, ...) and its lines
    are used; the rest of `slow` is returned. Fields without a `driver:` line are left alone."""
    key = pl.col("body").str.extract(_DRVINFO, 1)
    cmd = pl.col("body").str.extract(_DRVINFO_CMD, 1)
    cand = slow.with_columns(key.alias("_key"), pl.col("body").str.extract(_DRVINFO, 2).alias("_val"), cmd.alias("_cmd"))
    cand = cand.filter(pl.col("_key").is_not_null() | pl.col("_cmd").is_not_null())
    if not cand.height or not (cand["_key"] == "driver").any():
        return slow
    used: list[int] = []
    cur: dict | None = None
    pending: tuple[int, str] | None = None  # an `ethtool -i IFACE` line not yet followed by its block
    for line_no, k, v, c in cand.select("line_no", "_key", "_val", "_cmd").iter_rows():
        if k is None:
            pending, cur = (line_no, c), None
            continue
        if k == "driver":
            cur = {"line_no": line_no, "iface": pending[1] if pending else None, "driver": (v or "").strip() or None,
                   "_last": line_no}
            if pending:
                used.append(pending[0])
            pending = None
            info.append(cur)
            used.append(line_no)
            continue
        if cur is not None and line_no - cur["_last"] <= 2:  # the fields follow (a blank line may separate)
            cur[k.replace("-", "_")] = (v or "").strip() or None
            cur["_last"] = line_no
            used.append(line_no)
    for d in info:
        d.pop("_last", None)
    features.add("driver-info")
    return slow.filter(~pl.col("line_no").is_in(pl.Series(used, dtype=pl.Int64).implode()))


def _slow_lines(df: pl.DataFrame, ctx: ParseContext, unparsed: list[pl.DataFrame], features: set[str],
                info: list[dict] | None = None) -> pl.DataFrame:
    """The lines that are neither fast counters, markers, commands nor queue headers: per-queue
    prefixed counters ("[0]: x: 1", "rxq0: x: 1", returned as counter rows), blank lines, the header,
    and what goes to `unparsed`."""
    slow = df.filter(~pl.col("fast") & ~pl.col("is_marker") & ~pl.col("is_cmd") & ~pl.col("is_qhdr"))
    kk = pl.col("k").str.strip_chars(" \t")
    lqn = pl.coalesce(kk.str.extract(r"^\[([0-9]+)\]$", 1), kk.str.extract(r"^[rt]xq([0-9]+)$", 1))
    kmap = slow.select("k").unique().with_columns(lqn.cast(pl.Int32, strict=False).alias("lqn"))
    slow = slow.join(kmap, on="k", how="left", maintain_order="left")
    pos2 = pl.col("v").str.find(": ", literal=True).cast(pl.Int64)
    is_pref = pl.col("lqn").is_not_null()
    slow = slow.with_columns(
        pl.when(is_pref).then(pl.col("v").str.head(pos2)).otherwise(pl.col("k")).alias("k2"),
        pl.when(is_pref).then(pl.col("v").str.slice(pos2 + 2)).otherwise(pl.col("v")).str.strip_chars(" \t")
        .alias("v2"))
    slow = slow.with_columns(pl.col("v2").cast(pl.UInt64, strict=False).alias("u2"),
                             pl.col("v2").is_in(list(NA_VALUES)).alias("na2"))
    ok2 = ((pl.col("u2").is_not_null() & ~pl.col("v2").str.starts_with("+")) | pl.col("na2")).fill_null(False)
    slow = slow.with_columns(ok2.alias("ok2"))
    pref = slow.filter(pl.col("ok2")).with_columns(pl.col("k2").alias("k"), pl.col("u2").alias("u"),
                                                   pl.col("na2").alias("is_na"))
    slow = slow.filter(~pl.col("ok2"))
    if bool(pref["lqn"].is_not_null().any()):
        features.add("queue-prefix")
    slow = slow.with_columns(pl.col("text").str.strip_chars(" \t").alias("body"))
    is_header = pl.col("body") == "NIC statistics:"
    if bool(slow.select(is_header.any()).item()):
        features.add("header")
    slow = slow.filter((pl.col("body") != "") & ~is_header)
    if slow.height and info is not None:
        slow = _driver_info(slow, features, info)
    if slow.height:
        unparsed.append(unparsed_frame(slow, _value_reason(pl.col("v2")), ctx, NAME))
    return pref


def _parse_block(data: bytes, ctx: ParseContext, has_markers: bool, line_offset: int, sample_offset: int,
                 unparsed: list[pl.DataFrame], features: set[str], hosts: set[str],
                 info: list[dict] | None = None, notes: list[dict] | None = None) -> tuple[pl.DataFrame, int, int]:
    """Rows of one block (the whole input, or a run of whole snapshots); (rows, lines, markers)."""
    notes = notes if notes is not None else []
    n_unparsed = len(unparsed)
    df = _split_lines(data)
    n = df.height
    if df["text"].str.starts_with(">").any():  # pasted in a mail reply: read without the quote prefixes
        df = df.with_columns(pl.col("text").str.replace(RE_MAIL_QUOTE, ""))
        features.add("mail-quoted")
    # every line: marker?, "name: value" split, value as u64 (the hot path: no regex, no Python; one
    # query) ("%s: %llu" is ethtool's format; other spellings get a second chance on the slow path)
    lf = df.lazy()
    if line_offset:
        lf = lf.with_columns(pl.col("line_no") + line_offset)
    for step in _LINE_STEPS:
        lf = lf.with_columns(step)
    if has_markers:
        features.add("markers")
        lf = lf.with_columns((pl.col("is_marker").cast(pl.Int64).cum_sum() - 1).alias("sample_no"))
    else:
        lf = lf.with_columns(pl.lit(0, dtype=pl.Int64).alias("sample_no"))
    df = lf.drop("pos").collect()
    flags = df.select(_FLAGS).row(0, named=True)
    if flags["slow"]:  # lines that are not counters: a paste's tabs or wrapped values among them?
        fixed = repair_paste(df.select("line_no", "text", "is_marker"), notes)
        if fixed is not None:
            text, wrapped = fixed
            features.add("paste-repaired")
            if wrapped:
                features.add("wrapped-values")
            lf = df.select("line_no", text).lazy()
            for step in _LINE_STEPS:
                lf = lf.with_columns(step)
            lf = lf.with_columns(df.get_column("sample_no"))
            df = lf.drop("pos").collect()
            flags = df.select(_FLAGS).row(0, named=True)
    n_markers = int(flags["markers"] or 0)
    cols = ["line_no", "sample_no", "seg", "cmd_iface", "cmd_ts", "sec_queue", "k", "u", "is_na"]
    # (a header more than once without markers: perhaps several snapshots pasted, see _ethtool_paste.pasted_snapshots)
    if not (flags["cand"] or flags["slow"] or flags["before"] or (flags["headers"] > 1 and not has_markers)):
        # (eager: a lazy query joins this several times slower)
        rows = join_names(df.filter(pl.col("fast")).select("line_no", "sample_no", "k", "u", "is_na"))
        if not rows["_qhdr"].any():
            return _simple_block(df, rows, flags, ctx, has_markers, sample_offset, unparsed, features), n, n_markers

    # the other lines: structure (blank, header, shell command, watch header) or unparsed
    cmd_rows: list[tuple[int, str | None, dt.datetime | None]] = []
    if flags["cand"]:
        cand = df.filter(~pl.col("fast") & ~pl.col("is_marker")).filter(pl.col("text").str.contains("ethtool", literal=True))
        for line_no, text in cand.select("line_no", "text").iter_rows():
            m = command_at(text)
            if m:
                cmd_rows.append((line_no - 1 - line_offset, m.group(1) or m.group(2), watch_ts(text, ctx.tz)))
                h = PROMPT_HOST.match(text)
                if h:
                    hosts.add(h.group(1))
    if cmd_rows:
        features.add("command")
        if any(r[2] is not None for r in cmd_rows):
            features.add("watch")
        never = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)  # a marker ends what a command line said
        idx = pl.Series([r[0] for r in cmd_rows], dtype=pl.Int64)
        is_cmd = pl.repeat(False, n, dtype=pl.Boolean, eager=True).alias("is_cmd").scatter(idx, True)
        c_iface = pl.repeat(None, n, dtype=pl.String, eager=True).alias("cmd_iface").scatter(
            idx, pl.Series([r[1] or "" for r in cmd_rows], dtype=pl.String))
        c_ts = pl.repeat(None, n, dtype=_TS, eager=True).alias("cmd_ts").scatter(
            idx, pl.Series([r[2] or never for r in cmd_rows], dtype=_TS))
        df = df.with_columns(is_cmd, c_iface, c_ts, is_cmd.cum_sum().cast(pl.Int64).alias("seg"))
        df = df.with_columns(
            pl.when(pl.col("is_marker")).then(pl.lit("")).otherwise(pl.col("cmd_iface")).forward_fill()
            .replace("", None).alias("cmd_iface"),
            pl.when(pl.col("is_marker")).then(pl.lit(never, dtype=_TS)).otherwise(pl.col("cmd_ts")).forward_fill()
            .replace(never, None).alias("cmd_ts"))
    else:
        df = df.with_columns(pl.lit(False).alias("is_cmd"), pl.lit(None, dtype=pl.String).alias("cmd_iface"),
                             pl.lit(None, dtype=_TS).alias("cmd_ts"), pl.lit(0, dtype=pl.Int64).alias("seg"))

    # vmxnet3: "Tx Queue#: N" opens a section of deeper-indented counters of queue N
    qhdr = (pl.col("k").str.strip_chars(" \t").is_in(["Tx Queue#", "Rx Queue#"]) & pl.col("fast")
            & pl.col("u").is_not_null() & (pl.col("u") <= 1 << 30))
    if bool(df.select(qhdr.any()).item()):
        features.add("queue-sections")
        indent = pl.col("text").str.len_bytes() - pl.col("text").str.strip_chars_start(" \t").str.len_bytes()
        df = df.with_columns(qhdr.fill_null(False).alias("is_qhdr"), indent.alias("indent"))
        df = df.with_columns(pl.when(pl.col("is_qhdr")).then(pl.col("indent")).forward_fill().alias("hdr_indent"))
        brk = (pl.col("is_marker") | pl.col("is_cmd")
               | ((pl.col("text").str.strip_chars(" \t") != "") & (pl.col("indent") <= pl.col("hdr_indent"))))
        df = df.with_columns(
            pl.when(pl.col("is_qhdr")).then(pl.col("u").cast(pl.Int64)).when(brk).then(-1).forward_fill()
            .alias("sec_queue"))
        df = df.with_columns(pl.when(pl.col("sec_queue") >= 0).then(pl.col("sec_queue")).cast(pl.Int32)
                             .alias("sec_queue"),
                             (pl.col("fast") & ~pl.col("is_qhdr")).alias("fast"))
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.Int32).alias("sec_queue"), pl.lit(False).alias("is_qhdr"))

    # markers: the snapshot's time and interface (a malformed marker still opens a snapshot)
    if has_markers:
        m_ts, m_iface, bad = snapshot_markers(df.filter(pl.col("is_marker")).select("line_no", "text"))
        if bad:
            unparsed.append(unparsed_frame(df.filter(pl.col("line_no").is_in(bad)),
                                           "malformed forensics-sample marker line", ctx, NAME))
        if flags["before"]:
            before = df.filter(pl.col("sample_no") < 0)
            lost = before.filter(pl.col("text").str.strip_chars(" \t") != "")
            if lost.height:
                unparsed.append(unparsed_frame(lost, BEFORE_FIRST_MARKER, ctx, NAME))
            df = df.filter(pl.col("sample_no") >= 0)

    # slow lines: per-queue prefixed counters ("[0]: x: 1", "rxq0: x: 1") / blank / header / unparsed
    # (with only blank and header lines besides counters and markers, nothing to do but note the header)
    pref = _slow_lines(df, ctx, unparsed, features, info) if flags["slow"] else None
    if pref is None and flags["header"]:
        features.add("header")

    # counters: names mapped once per distinct spelling, then joined back
    fast = df.filter(pl.col("fast")).select(*cols, pl.lit(None, dtype=pl.Int32).alias("lqn"))
    if pref is not None and pref.height:
        fast = fast.merge_sorted(pref.select(*cols, "lqn"), key="line_no")
    rows = _bad_rows(join_names(fast), df, ctx, unparsed)

    # snapshot, time, interface
    hint = pl.lit(hint_iface(ctx), dtype=pl.String)
    if has_markers:
        sample_no = pl.col("sample_no") + sample_offset
        ts = m_ts.gather(rows["sample_no"]).alias("ts") if rows.height else pl.lit(None, dtype=_TS).alias("ts")
        rows = rows.with_columns(ts, m_iface.gather(rows["sample_no"]).alias("m_iface") if rows.height
                                 else pl.lit(None, dtype=pl.String).alias("m_iface"))
        quality = pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none"))
        iface = pl.coalesce(pl.col("m_iface"), pl.col("cmd_iface"), hint)
    else:
        rows, split = pasted_snapshots(rows, df, unparsed[n_unparsed:])
        if split:
            features.add("snapshots")
        sample_no = (pl.col("seg").rank("dense") - 1).cast(pl.Int64) if cmd_rows or split else pl.col("sample_no")
        cap = ctx.capture_time
        if cap is not None and cap.tzinfo is None:
            cap = cap.replace(tzinfo=dt.timezone.utc)
        rows = rows.with_columns(pl.coalesce(pl.col("cmd_ts"), pl.lit(cap, dtype=_TS)).alias("ts"))
        quality = (pl.when(pl.col("cmd_ts").is_not_null()).then(pl.lit("local"))
                   .otherwise(pl.lit("sampled" if cap is not None else "none")))
        iface = pl.coalesce(pl.col("cmd_iface"), hint)
    by_line = pl.col("lqn").is_not_null() | pl.col("sec_queue").is_not_null()
    out = rows.select(
        pl.col("line_no"),
        sample_no.alias("sample_no"),
        pl.col("ts"),
        quality.alias("ts_quality"),
        iface.alias("iface"),
        pl.when(by_line).then(pl.col("raw_name")).otherwise(pl.col("counter")).alias("counter"),
        pl.coalesce(pl.col("lqn"), pl.col("sec_queue"), pl.col("queue")).alias("queue"),
        pl.col("raw_name"),
        pl.when(pl.col("is_na")).then(None).otherwise(pl.col("u")).cast(pl.Int64).alias("value"),
    )
    return out, n, n_markers


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    got = collapsed.expand(data) if len(data) <= collapsed.MAX_LINE else None
    if got is not None:  # the header and the counters on one line (a page lost the line breaks): taken apart
        text, origin, lines = got
        return collapsed.restore(_parse(text, ctx), origin[-1], origin, lines)
    return _parse(data, ctx)


def _parse(data: bytes, ctx: ParseContext) -> ParseResult:
    if not data:  # (count_lines(data) == 0; the blocks count the lines)
        return result(NAME, ctx, 0, {"nic_counters": schema.empty("nic_counters")}, variant="empty")
    has_markers = data.startswith(_MARKER_B) or b"\n" + _MARKER_B in data
    unparsed: list[pl.DataFrame] = []
    features: set[str] = set()
    hosts: set[str] = set()
    info: list[dict] = []
    notes: list[dict] = []
    outs = []
    lines = markers = 0
    for a, b in _blocks(data, BLOCK_BYTES) if has_markers else [(0, len(data))]:
        out, k, m = _parse_block(data[a:b] if (a, b) != (0, len(data)) else data, ctx, has_markers, lines, markers,
                                 unparsed, features, hosts, info, notes)
        outs.append(out)
        lines += k
        markers += m
    out = pl.concat(outs) if len(outs) > 1 else outs[0]
    order = ["noheader" if "header" not in features else None] + [
        f for f in ("markers", "command", "watch", "header", "queue-prefix", "queue-sections", "driver-info", "snapshots")
        if f in features]
    meta: dict = {"variant": "+".join(f for f in order if f)}
    if info:
        meta["driver_info"] = info
    if notes:  # the authors' notes after values, taken off to read the values (kept here, not lost)
        meta["notes"] = notes[:MAX_NOTES]
        meta["notes_count"] = len(notes)
    if hosts:
        meta["hosts"] = sorted(hosts)
    meta["ifaces"] = sorted(x for x in out["iface"].unique().to_list() if x is not None)
    tables = {"nic_counters": out}
    if unparsed and link_stats.looks_present(data):
        unparsed = _other_tools(unparsed, ctx, tables, meta)
    return result(NAME, ctx, lines, tables, unparsed, **meta)


def _other_tools(unparsed: list[pl.DataFrame], ctx: ParseContext, tables: dict, meta: dict) -> list[pl.DataFrame]:
    """The ifconfig / ``ip -s link`` blocks pasted with the counters (:mod:`forensics.sources._link_stats`),
    read out of the lines left unparsed: their counters into ``link_stats``, their other lines skipped
    (meta ``skipped``: reason -> lines), the ifconfig / ip command lines into meta ``commands``, the rest
    left unparsed."""
    up = pl.concat(unparsed).sort("line_no")
    rows, used, skipped = link_stats.read(up.select("line_no", "text").rows())
    if not rows:
        return unparsed
    ts = ctx.capture_time
    df = pl.DataFrame(rows, schema={"line_no": pl.Int64, "iface": pl.String, "tool": pl.String, "counter": pl.String,
                                    "raw_name": pl.String, "value": pl.Int64}).with_columns(
        pl.lit(0, dtype=pl.Int64).alias("sample_no"),
        pl.lit(ts, dtype=_TS).alias("ts"),
        pl.lit("sampled" if ts is not None else "none").alias("ts_quality"))
    tables["link_stats"] = df
    gone = used | {ln for ln, _ in skipped}
    # the command lines that printed those blocks ("[root@n1 ~]# ip -s link show eth0"): facts, as ethtool's own
    cmds = [(ln, t.strip()) for ln, t in up.select("line_no", "text").rows()
            if ln not in gone and "ethtool" not in t and link_stats.is_command(t.strip())]
    if cmds:
        meta["commands"] = [*meta.get("commands", []), *({"line_no": ln, "command": c} for ln, c in cmds)]
        gone |= {ln for ln, _ in cmds}
    reasons: dict[str, int] = {}
    for _, why in skipped:
        reasons[why] = reasons.get(why, 0) + 1
    if reasons:
        meta["skipped"] = reasons
    meta["variant"] = "+".join(x for x in (meta.get("variant"), "link-stats") if x)
    return [up.filter(~pl.col("line_no").is_in(sorted(gone)))]


def _blocks(data: bytes, size: int) -> list[tuple[int, int]]:
    """(start, end) byte ranges of about `size`, each but the first starting at a marker line."""
    cuts = [0]
    pos = size
    while pos < len(data):
        j = data.find(b"\n" + _MARKER_B, pos)
        if j < 0:
            break
        cuts.append(j + 1)
        pos = j + 1 + size
    cuts.append(len(data))
    return list(zip(cuts, cuts[1:]))
