"""InfiniBand / RoCE ports -> ``ib_ports`` (state, rate) and ``ib_counters`` (port counters).

One fabric-port family, four ways operators read it (all of rdma-core / infiniband-diags or the
kernel's sysfs), each recognised by its own lines, and mixed in one input when pasted together:

* ``ibstat`` (``CA 'mlx5_0'`` then TAB-indented ``CA type:``, ``Firmware version:``, ``Node GUID:``
  and per ``Port N:`` ``State: Active``, ``Physical state: LinkUp``, ``Rate: 200``, ``Base lid:``,
  ``SM lid:``, ``Port GUID:``, ``Link layer:``); ``ibpanic:``/``ibwarn:`` lines it prints on
  errors go to ``unparsed`` with their reason (the ports before them are kept);
* ``ibstatus`` (``Infiniband device 'mlx5_0' port 1 status:`` then ``default gid:``, ``base lid:
  0x33bf`` (hex), ``sm lid:``, ``state: 4: ACTIVE``, ``phys state: 5: LinkUp``, ``rate: 200 Gb/sec
  (4X HDR)``, ``link_layer: InfiniBand``);
* ``perfquery [-x|-E|-D|...]`` (``# Port extended counters: Lid 2052 port 1 (CapMask: ...)`` then
  ``PortXmitData:....................178791657177235``); the device comes from a ``-C <dev>`` in
  the collector's marker, a pasted command line or a sosreport file name
  (``perfquery_-C_mlx5_0_-P_1``), else ``ctx.hints["device"]``, else null;
* sysfs read with ``grep -H`` (what ``forensics collect`` runs): ``<path>:<value>`` lines of
  ``/sys/class/infiniband/<dev>/ports/<port>/counters/<name>``, ``.../hw_counters/<name>``, and the
  port's ``state``, ``phys_state``, ``rate`` and ``link_layer`` files (these give an ``ib_ports``
  row per snapshot; the path may be relative, as when grep runs inside the folder);
* iproute2's ``rdma statistic [show [link <dev>/<port>]]``: ``link mlx5_1/1 rx_write_requests 0
  rx_read_requests 0 ...`` and its continuation lines (one space, more ``name value`` pairs): the
  driver's hw_counters of the port read over netlink (mlx5: out_of_buffer, np_cnp_sent,
  rp_cnp_handled, ...), rows of ``counter_set`` ``hw_counters`` like the sysfs folder's;
* GID tables -> ``ib_gids`` (:mod:`forensics.sources._ib_gids`): the same grep over ``gids`` and
  ``gid_attrs/{types,ndevs}``, ``show_gids``, ``ibv_devinfo -v``'s ``GID[n]`` lines (its other lines
  go to ``unparsed``) and ibstatus' ``default gid``.

Repeated snapshots each preceded by the collector's marker line give ``sample_no`` and ``ts``
(``sampled``); without markers ``ts`` is ``ctx.capture_time`` or null (``none``). perfquery's
structure lines (``PortSelect``, ``CounterSelect``, ``CounterSelect2``) give no counter row;
shell prompts and other lines go to ``unparsed`` with a reason.

Counter names: perfquery's are mapped to the kernel's sysfs names (``SymbolErrorCounter`` ->
``symbol_error``, ``LinkDownedCounter`` -> ``link_downed``, ``PortXmitWait`` -> ``port_xmit_wait``,
``PortXmitPkts`` -> ``port_xmit_packets``, ...; ``raw_name`` keeps the printed one), so one query
reads both. Counter lines are split in polars (a sysfs series is the bulk of the input).

>>> from forensics.sources import ParseContext
>>> sample = (b"CA 'mlx5_0'\\n\\tCA type: MT4129\\n\\tPort 1:\\n\\t\\tState: Down\\n\\t\\tPhysical state: Polling\\n"
...           b"\\t\\tRate: 40\\n\\t\\tLink layer: InfiniBand\\n"
...           b"# Port extended counters: Lid 2052 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)\\n"
...           b"PortSelect:......................1\\n"
...           b"LinkDownedCounter:...............1\\n"
...           b"/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:12\\n")
>>> res = parse(sample, ParseContext(host="n1", hints={"device": "mlx5_0"}))
>>> res.tables["ib_ports"].select("line_no", "tool", "device", "port", "state", "phys_state", "rate_gbps").rows()
[(3, 'ibstat', 'mlx5_0', 1, 'DOWN', 'Polling', 40.0)]
>>> res.tables["ib_counters"].select("line_no", "device", "port", "counter_set", "counter", "value").rows()
[(10, 'mlx5_0', 1, 'PortCountersExtended', 'link_downed', 1), (11, 'mlx5_0', 1, 'counters', 'symbol_error', 12)]
>>> res.lines, res.unparsed.height
(11, 0)
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics.sources import _ib_gids as gids
from forensics.sources._ib_ports import TS as _TS, Ports as _Ports, port_key as _port_key, sysfs_ports as _sysfs_ports
from forensics.sources._base import (
    ParseContext,
    ParseResult,
    Sniff,
    drop_before_first_marker,
    marker_split,
    result,
    sniff_lines,
    split_lines,
    unparsed_rows,
)

NAME = "infiniband"
VERSION = 6  # 6: a rate past a double's range (a run of hundreds of digits) is no rate_gbps (was inf); 5: a decimal base/SM LID is ASCII digits only, read within 31 bits by the shared bounded reader (int() also took a sign, blanks and underscores); 4: a port number over 255 (IBA PortNum is 8 bits) or a GID index beyond 31 bits is no port/index: its line (and an ibstat/ibstatus port's key lines, an rdma link's continuation lines) unparsed, a perfquery header's counters kept with port null; before, a ComputeError/TypeError lost the file; 3: perfquery -x (64-bit PortXmitWait), iproute2 `rdma statistic`
TABLES = ("ib_ports", "ib_counters", "ib_gids")
DESCRIPTION = ("InfiniBand/RoCE ports: ibstat, ibstatus, perfquery [-x], /sys/class/infiniband counters, hw_counters and "
               "GID tables (grep -H), show_gids, ibv_devinfo -v GIDs, rdma statistic (iproute2: the driver's hw_counters, "
               "CNP/ECN counters included)")
SNIFF_PRIORITY = 30

INT64_MAX = (1 << 63) - 1
_OF_NOT_PORT = "line of a port whose number is not a port (over 255)"

# perfquery (infiniband-diags perfquery.c / ibdiag field names) -> kernel sysfs counter names
# (drivers/infiniband/core/sysfs.c): one vocabulary for both.
PERFQUERY_TO_SYSFS = {
    "SymbolErrorCounter": "symbol_error",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed",
    "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15Dropped": "VL15_dropped",
    "PortXmitData": "port_xmit_data",
    "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets",
    "PortXmitWait": "port_xmit_wait",
    "PortUnicastXmitPkts": "unicast_xmit_packets",
    "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets",
    "PortMulticastRcvPkts": "multicast_rcv_packets",
}
_PQ_STRUCTURE = ("PortSelect", "CounterSelect", "CounterSelect2")
# "# Port extended counters: Lid 2052 port 1 (CapMask: ...)" -> the attribute perfquery read
_PQ_SETS = {
    "Port counters": "PortCounters",
    "Port extended counters": "PortCountersExtended",
    "PortRcvErrorDetails counters": "PortRcvErrorDetails",
    "PortXmitDiscardDetails counters": "PortXmitDiscardDetails",
    "PortExtendedSpeedsCounters": "PortExtendedSpeedsCounters",
    "PortExtendedSpeedsCounters RSFEC active": "PortExtendedSpeedsCounters",
    "PortXmitDataSL counters": "PortXmitDataSL",
    "PortRcvDataSL counters": "PortRcvDataSL",
    "PortOpRcvCounters counters": "PortOpRcvCounters",
    "PortFlowCtlCounters counters": "PortFlowCtlCounters",
    "PortVLOpPackets counters": "PortVLOpPackets",
    "PortVLOpData counters": "PortVLOpData",
    "PortVLXmitFlowCtlUpdateErrors counters": "PortVLXmitFlowCtlUpdateErrors",
    "PortVLXmitWaitCounters counters": "PortVLXmitWaitCounters",
    "SwPortVLCongestion counters": "SwPortVLCongestion",
    "PortSamplesControl": "PortSamplesControl",
}

_CA = re.compile(r"^CA '([^']+)'\s*$")
_CA_KEY = re.compile(r"^\s+(CA type|Number of ports|Firmware version|Hardware version|Node GUID|System image GUID):\s*(.*?)\s*$")
_PORT = re.compile(r"^\s+Port ([0-9]+):\s*$")
_PORT_KEY = re.compile(r"^\s+(State|Physical state|Rate|Base lid|LMC|SM lid|Capability mask|Port GUID|Link layer):\s*(.*?)\s*$")
_IBSTATUS = re.compile(r"^Infiniband device '([^']+)' port ([0-9]+) status:\s*$")
_IBSTATUS_KEY = re.compile(r"^\s+(default gid|base lid|sm lid|state|phys state|rate|link_layer):\s*(.*?)\s*$")
_IBDIAG_MSG = re.compile(r"^(ibpanic|ibwarn|ibdebug|iberror|ibstat|ibstatus|perfquery): ")
_PQ_HEADER2 = re.compile(r"^# (.*?): Lid ([0-9]+) port ([0-9]+|ALL)\b")
_PQ_LINE_RE = r"^([A-Za-z][A-Za-z0-9_]*):\.+(.*?)\s*$"
_SYSFS_RE = (r"^\s*(?:\S*?/)?(?:infiniband/)?([A-Za-z0-9_.:-]+)/ports/([0-9]+)/+(counters|hw_counters)/+"
             r"([A-Za-z0-9_]+):(.*?)\s*$")
# the counter path `forensics collect` and the simulator write (grep -H of /sys/class/infiniband/...): a line
# it matches is matched by _SYSFS_RE with the same device, port, set and name (no prefix shorter than
# "/sys/class/" can match, and it has one "/" at each `/+`) and a value that differs only by trailing
# whitespace, which _counters strips; without the lazy prefix and the trailing-blank search it is read ~3x faster
_SYSFS_CANONICAL_RE = r"^/sys/class/infiniband/([A-Za-z0-9_.:-]+)/ports/([0-9]+)/(counters|hw_counters)/([A-Za-z0-9_]+):(.*)$"
_SYSFS_ATTR = re.compile(r"^\s*(?:\S*?/)?(?:infiniband/)?([A-Za-z0-9_.:-]+)/ports/([0-9]+)/+(state|phys_state|rate|link_layer):(.*?)\s*$")
_COMMAND = re.compile(r"(?:^|[\s$#>/])(ibstat|ibstatus|perfquery|grep|show_gids|ibv_devinfo|rdma)(?:\s|$)")
_RDMA_LINK = re.compile(r"^link ([A-Za-z0-9_.:-]+)/([0-9]+)((?:\s+[A-Za-z][A-Za-z0-9_]*\s+[0-9]+)+)\s*$")
_RDMA_MORE = re.compile(r"^\s+[A-Za-z][A-Za-z0-9_]*\s+[0-9]+(?:\s+[A-Za-z][A-Za-z0-9_]*\s+[0-9]+)*\s*$")
# the readers the state machine tries before a sysfs attribute line when no section is open
_BEFORE_ATTR = "|".join(f"(?:{p.pattern})" for p in (_CA, _IBSTATUS, gids.SYSFS_GID, gids.SHOW_GIDS_ROW,
                                                    gids.SHOW_GIDS_STRUCTURE, gids.DEVINFO_HCA, gids.DEVINFO_GID,
                                                    gids.DEVINFO_PORT, _RDMA_LINK))
_DEVINFO_DEV = re.compile(r"ibv_devinfo\b.*?(?:-d|--ib-dev)(?:\s+|=)([A-Za-z0-9_.:-]+)")
_DEV_OPT = re.compile(r"(?:^|\s)(?:-C|--Ca)(?:\s+|=)([A-Za-z0-9_.:-]+)")
_SOS_PQ = re.compile(r"perfquery_-C_([A-Za-z0-9_.:-]+?)_-P_([0-9]+)")


def sniff(head: bytes) -> Sniff:
    """Confident on ibstat's ``CA '...'`` + ``Port N:``, ibstatus' device line, perfquery's header
    and dotted lines, sysfs counter paths, or GID table lines (sysfs gids, show_gids, ibv_devinfo GID[n])."""
    lines = sniff_lines(head)
    if not lines:
        return Sniff(0.0, "no lines")
    hits = 0
    strong = ""
    for ln in lines:
        if _CA.match(ln) or _IBSTATUS.match(ln):
            strong = strong or "an ibstat/ibstatus device line"
            hits += 1
        elif _PQ_HEADER2.match(ln):
            strong = strong or "a perfquery counters header"
            hits += 1
        elif (_CA_KEY.match(ln) or _PORT.match(ln) or _PORT_KEY.match(ln) or _IBSTATUS_KEY.match(ln)
              or re.match(_PQ_LINE_RE, ln) or _SYSFS_ATTR.match(ln)):
            hits += 1
        elif re.match(_SYSFS_RE, ln):
            strong = strong or "/sys/class/infiniband counter paths"
            hits += 1
        elif _RDMA_LINK.match(ln):
            strong = strong or "an rdma statistic link line"
            hits += 1
        elif _RDMA_MORE.match(ln) and hits:
            hits += 1
        elif gids.SYSFS_GID.match(ln) or gids.SHOW_GIDS_ROW.match(ln) or gids.DEVINFO_GID.match(ln):
            strong = strong or "RDMA GID table lines"
            hits += 1
        elif gids.DEVINFO_HCA.match(ln):
            strong = strong or "an ibv_devinfo hca_id line"
            hits += 1
        elif gids.SHOW_GIDS_STRUCTURE.match(ln):
            strong = strong or ("a show_gids header" if ln.lstrip().startswith("DEV") else strong)
            hits += 1
        elif gids.DEVINFO_ATTR.match(ln):
            hits += 1
    if not strong:
        return Sniff(0.0, "no ibstat, ibstatus, perfquery, sysfs counter, rdma statistic or GID table line")
    return Sniff.ratio(hits, len(lines), f"match, with {strong}", floor=0, bonus=0.2)


def _device_of(command: str | None) -> str | None:
    if not command:
        return None
    m = _SOS_PQ.search(command) or _DEV_OPT.search(command)
    return m.group(1) if m else None


def _counter_lines(df: pl.DataFrame) -> pl.DataFrame:
    """Every line split as a sysfs ``path:value`` counter line (polars): columns s_dev, s_port, s_set,
    s_name, s_val (null where the line is none). Lines in the form ``forensics collect`` writes are read
    with :data:`_SYSFS_CANONICAL_RE`, the others (relative paths, ``//``, leading blanks) with _SYSFS_RE."""
    names = ["s_dev", "s_port", "s_set", "s_name", "s_val"]
    out = df.with_columns(pl.col("text").str.extract_groups(_SYSFS_CANONICAL_RE).struct.rename_fields(names)
                          .alias("s")).unnest("s")
    miss = out.get_column("s_name").is_null()
    if not miss.any():
        return out
    rest = df.filter(miss).select(pl.col("text").str.extract_groups(_SYSFS_RE).struct.rename_fields(names)
                                  .alias("s")).unnest("s")
    if rest.height == out.height:
        return out.with_columns(rest)
    at = miss.arg_true()
    return out.with_columns(out.get_column(c).scatter(at, rest.get_column(c)) for c in names)


def _perfquery_lines(df: pl.DataFrame) -> pl.DataFrame:
    """The lines of `df` split as perfquery ``Name:....value`` lines (columns p_name, p_val; null where not)."""
    return df.with_columns(pl.col("text").str.extract_groups(_PQ_LINE_RE).struct.rename_fields(["p_name", "p_val"])
                           .alias("p")).unnest("p")


def _only_sysfs_attrs(walk: pl.DataFrame) -> pl.DataFrame | None:
    """When every line of `walk` (the lines left for the state machine) is a marker or a printable-ASCII
    sysfs port attribute line (``.../ports/<n>/state:4: ACTIVE``) that no reader before it in the
    state machine would take: those lines (line_no, sample_no, sample_ts, a_dev, a_port, a_name, a_val),
    in order. Such a walk never opens a section, so each of its lines would open or fill the sysfs
    ``ib_ports`` row of its (sample, device, port) and nothing else; None otherwise (the state machine runs).
    On printable ASCII the Rust patterns of polars read like Python's ``re`` (``\\s`` is space and tab)."""
    lines = walk.filter(~pl.col("is_marker"))
    if lines.height == 0 or not _SYSFS_ATTR.match(lines.item(0, "text")):  # (the first line decides most inputs)
        return None
    attr = pl.col("text").str.extract_groups(_SYSFS_ATTR.pattern).struct.rename_fields(
        ["a_dev", "a_port", "a_name", "a_val"])
    ok = (pl.col("text").str.contains(r"^[\t\x20-\x7e]+$") & pl.col("text").str.contains(_SYSFS_ATTR.pattern)
          & ~pl.col("text").str.contains(_BEFORE_ATTR))
    if not lines.select(ok.all()).item():
        return None
    return lines.select("line_no", "sample_no", "sample_ts", attr.alias("a")).unnest("a")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    if n == 0:
        return result(NAME, ctx, 0, {"ib_ports": _Ports().frame(), "ib_counters": _empty_counters(),
                                     "ib_gids": gids.Gids().frame()}, variant="empty")
    df = marker_split(df)
    has_markers = bool(df["is_marker"].any())
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    df = _counter_lines(df)
    hint_dev = (ctx.hints or {}).get("device") or _device_of(ctx.file)
    file_port = _SOS_PQ.search(ctx.file or "")

    ports = _Ports()
    gid_rows = gids.Gids()
    dev_ctx: dict = {}  # ibv_devinfo: the hca_id and port the GID lines belong to
    bad: list[tuple[int, str, str]] = []
    variants: set[str] = set()
    # perfquery context per line (device, port, attribute), filled by the walk below
    pq_ctx: dict[int, tuple[str | None, int | None, str]] = {}
    ca: dict = {}
    section = None  # "ibstat-ca" | "ibstat-port" | "ibstatus" | "perfquery"
    pq_dev = pq_port = pq_set = None
    cmd_dev = None
    last_sample = None
    sysfs_port: dict[tuple, dict] = {}
    rdma_rows: list[tuple] = []  # rdma statistic: (line_no, sample_no, ts, text, device, port, name, value)
    rdma_port: tuple | None = None

    # sysfs counter lines (the bulk of a series) only close a section: they are skipped by the walk,
    # which closes the section of the line after them (`after_counter`), and become rows in polars
    counter = pl.col("s_name").is_not_null() & (pl.col("sample_no") >= 0) & ~pl.col("is_marker")
    df = df.with_columns(counter.alias("counter"), counter.shift(1, fill_value=False).alias("after_counter"))
    if df["counter"].any():
        variants.add("sysfs")
    walk = _perfquery_lines(drop_before_first_marker(df.filter(~pl.col("counter")), bad))
    attrs = _only_sysfs_attrs(walk)
    if attrs is not None and not attrs.select(pl.col("a_port").cast(pl.UInt16, strict=False).le(gids.PORT_MAX)
                                              .fill_null(False).all()).item():
        attrs = None  # a port number that is no port: the state machine sends its line to unparsed
    if attrs is not None:  # a sysfs series (what `forensics collect` writes): its port rows without the walk
        variants.add("sysfs")
        _sysfs_ports(attrs, ports, has_markers, cap)
        rows = iter(())
    else:
        rows = walk.select("line_no", "text", "is_marker", "sample_no", "sample_ts", "sample_argv", "s_name", "p_name",
                           "p_val", "after_counter").iter_rows()
    for line_no, text, is_marker, sample_no, sample_ts, argv, s_name, p_name, p_val, after_counter in rows:
        if sample_no != last_sample:
            last_sample = sample_no
            section, ca, cmd_dev, dev_ctx = None, {}, None, {}
            pq_dev = _device_of(argv)
        if after_counter:
            section = None
        if is_marker:
            continue
        ts = sample_ts if has_markers else cap
        stamp = {"sample_no": sample_no, "ts": ts, "ts_quality": "sampled" if ts is not None else "none"}
        if p_name is not None and section == "perfquery":
            if p_name not in _PQ_STRUCTURE:
                pq_ctx[line_no] = (pq_dev, pq_port, pq_set)
            continue
        stripped = text.strip()
        if not stripped:
            if section in ("ibstatus", "ibstatus-not-port"):
                section = None
            continue
        m = _CA.match(text)
        if m:
            variants.add("ibstat")
            ca = {"device": m.group(1)}
            section = "ibstat-ca"
            continue
        if section in ("ibstat-ca", "ibstat-port", "ibstat-not-port"):
            m = _PORT.match(text)
            if m:
                port = gids.port_no(m.group(1))
                if port is None:  # its key lines go to unparsed too (section "ibstat-not-port")
                    bad.append((line_no, text, gids.NOT_PORT))
                    section = "ibstat-not-port"
                    continue
                ports.open(line_no=line_no, tool="ibstat", device=ca.get("device"), port=port,
                           ca_type=ca.get("CA type"), firmware=ca.get("Firmware version"), node_guid=ca.get("Node GUID"),
                           **stamp)
                section = "ibstat-port"
                continue
            m = _PORT_KEY.match(text) if section != "ibstat-ca" else None
            if m:
                if section == "ibstat-port":
                    _port_key(ports.cur, m.group(1), m.group(2), width=False)
                else:
                    bad.append((line_no, text, _OF_NOT_PORT))
                continue
            m = _CA_KEY.match(text)
            if m and section == "ibstat-ca":
                ca[m.group(1)] = m.group(2)
                continue
        m = _IBSTATUS.match(text)
        if m:
            variants.add("ibstatus")
            port = gids.port_no(m.group(2))
            if port is None:  # its key lines go to unparsed too (section "ibstatus-not-port")
                bad.append((line_no, text, gids.NOT_PORT))
                section = "ibstatus-not-port"
                continue
            ports.open(line_no=line_no, tool="ibstatus", device=m.group(1), port=port, **stamp)
            section = "ibstatus"
            continue
        if section == "ibstatus-not-port" and _IBSTATUS_KEY.match(text):
            bad.append((line_no, text, _OF_NOT_PORT))
            continue
        if section == "ibstatus":
            m = _IBSTATUS_KEY.match(text)
            if m:
                _port_key(ports.cur, m.group(1), m.group(2))
                addr = gids.address(m.group(2)) if m.group(1) == "default gid" and ports.cur else None
                if addr:
                    gid_rows.add(line_no=line_no, tool="ibstatus", device=ports.cur["device"], port=ports.cur["port"],
                                 gid_index=0, gid=m.group(2), address=addr, **stamp)
                continue
        m = gids.SYSFS_GID.match(text)
        if m:
            variants.add("sysfs")
            why = gid_rows.sysfs(m, line_no, stamp)
            if why:
                bad.append((line_no, text, why))
            section = None
            continue
        m = gids.SHOW_GIDS_ROW.match(text)
        if m:
            variants.add("show_gids")
            row = gids.show_gids_row(m, line_no, stamp)
            if isinstance(row, str):
                bad.append((line_no, text, row))
            elif row:
                gid_rows.add(**row)
            section = None
            continue
        if gids.SHOW_GIDS_STRUCTURE.match(text):
            variants.add("show_gids")
            section = None
            continue
        m = gids.DEVINFO_HCA.match(text)
        if m:
            variants.add("ibv_devinfo")
            dev_ctx = {"device": m.group(1)}
            section = "ibv_devinfo"
            continue
        m = gids.DEVINFO_GID.match(text)
        if m:  # also pasted without its hca_id line: the device of a `ibv_devinfo -d <dev>` command line, if any
            variants.add("ibv_devinfo")
            index = gids.index_no(m.group(1))
            if index is None:
                bad.append((line_no, text, gids.NOT_INDEX))
                continue
            addr = gids.address(m.group(2))
            if addr:
                gid_rows.add(line_no=line_no, tool="ibv_devinfo", device=dev_ctx.get("device") or cmd_dev or hint_dev,
                             port=dev_ctx.get("port"), gid_index=index, gid=m.group(2), address=addr,
                             gid_type=m.group(3), **stamp)
            continue
        m = gids.DEVINFO_PORT.match(text)
        if m:  # a port number that is none: the line unparsed, the port of the GIDs after it unknown (null)
            dev_ctx["port"] = gids.port_no(m.group(1))
            if dev_ctx["port"] is None:
                bad.append((line_no, text, gids.NOT_PORT))
            section = "ibv_devinfo"
            continue
        if section == "ibv_devinfo":
            bad.append((line_no, text, "ibv_devinfo line not read (only its hca_id, port and GID lines are)"))
            continue
        m = _RDMA_LINK.match(text)
        if m or (section in ("rdma", "rdma-not-port") and _RDMA_MORE.match(text)):
            if m:
                variants.add("rdma_statistic")
                rdma_port = (m.group(1), gids.port_no(m.group(2)))
                section = "rdma" if rdma_port[1] is not None else "rdma-not-port"
            if section == "rdma-not-port":  # the link's line and its continuation lines
                bad.append((line_no, text, gids.NOT_PORT if m else _OF_NOT_PORT))
                continue
            if m:
                pairs = m.group(3).split()
            else:
                pairs = text.split()
            for name, value in zip(pairs[::2], pairs[1::2]):
                rdma_rows.append((line_no, sample_no, ts, text, rdma_port[0], rdma_port[1], name, value))
            section = "rdma"
            continue
        m = _SYSFS_ATTR.match(text)
        if m:
            variants.add("sysfs")
            port = gids.port_no(m.group(2))
            if port is None:
                bad.append((line_no, text, gids.NOT_PORT))
                section = None
                continue
            key = (sample_no, m.group(1), port)
            row = sysfs_port.get(key)
            if row is None:
                row = sysfs_port[key] = ports.open(line_no=line_no, tool="sysfs", device=m.group(1), port=port,
                                                   **stamp)
            _port_key(row, m.group(3), m.group(4))
            section = None
            continue
        m = _PQ_HEADER2.match(stripped)
        if m:
            variants.add("perfquery")
            kind = m.group(1).strip()
            pq_set = _PQ_SETS.get(kind, kind.replace(" counters", "").replace(" ", ""))
            pq_port = gids.port_no(m.group(3)) if m.group(3).isdigit() else None
            if pq_port is None and m.group(3).isdigit():  # the header unparsed; its counters kept, port unknown
                bad.append((line_no, text, gids.NOT_PORT))
            elif pq_port is None and file_port:
                pq_port = gids.port_no(file_port.group(2))
            pq_dev = pq_dev or cmd_dev or hint_dev
            section = "perfquery"
            continue
        if _IBDIAG_MSG.match(stripped):
            bad.append((line_no, text, "infiniband-diags error or debug message"))
            continue
        if _COMMAND.search(stripped) and len(stripped) < 400:
            m = _DEVINFO_DEV.search(stripped)
            cmd_dev = m.group(1) if m else _device_of(stripped)
            if cmd_dev:
                pq_dev = cmd_dev
            bad.append((line_no, text, "shell prompt or command line, not tool output"))
            section = None
            continue
        bad.append((line_no, text, "not ibstat, ibstatus, perfquery or sysfs counter output"))

    counters = _counters(df, walk, pq_ctx, has_markers, cap, bad, ctx, rdma_rows)
    up = [unparsed_rows(bad, ctx, NAME)] if bad else []
    gid_frame = gid_rows.frame()
    port_frame = ports.frame()
    # (the distinct names in polars: a series' ~18,000 counter rows were each made a Python string, 0.8 -> 0.1 ms a file)
    devices = sorted(d for d in pl.concat([port_frame["device"], counters["device"], gid_frame["device"]]).unique()
                     .to_list() if d)
    order = [v for v in ("ibstat", "ibstatus", "perfquery", "sysfs", "rdma_statistic", "show_gids", "ibv_devinfo") if v in variants]
    if has_markers:
        order.append("markers")
    return result(NAME, ctx, n, {"ib_ports": port_frame, "ib_counters": counters, "ib_gids": gid_frame}, up,
                  variant="+".join(order) or "unrecognised", devices=devices)


def _empty_counters() -> pl.DataFrame:
    return pl.DataFrame(schema={"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "ts_quality": pl.String,
                                "device": pl.String, "port": pl.Int32, "counter_set": pl.String, "counter": pl.String,
                                "raw_name": pl.String, "value": pl.Int64})


def _counters(df: pl.DataFrame, walk: pl.DataFrame, pq_ctx: dict, has_markers: bool, cap, bad: list,
              ctx: ParseContext, rdma_rows: list | None = None) -> pl.DataFrame:
    """ib_counters rows of the sysfs counter lines (of `df`), perfquery lines (of `walk`, the lines the state
    machine read) and rdma statistic rows; values that are no u63 go to `bad`."""
    ts = (pl.col("sample_ts") if has_markers else pl.lit(cap, dtype=_TS)).cast(_TS)
    sysfs_rows = pl.col("s_name").is_not_null() & (pl.col("sample_no") >= 0)
    if not pq_ctx and not rdma_rows and not df.select(sysfs_rows.any()).item():  # (GID tables, ibstat: no counter line)
        return _empty_counters()
    stamp = [pl.col("line_no"), pl.col("sample_no"), ts.alias("ts"),
             pl.when(ts.is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality")]
    port = pl.col("s_port").cast(pl.UInt16, strict=False)
    not_port = port.is_null() | (port > gids.PORT_MAX)  # (a path's port of more digits: no port, the line unparsed)
    sysfs = df.filter(sysfs_rows).select(
        *stamp, pl.col("text"), pl.col("s_dev").alias("device"),
        pl.when(not_port).then(None).otherwise(port).cast(pl.Int32).alias("port"),
        pl.col("s_set").alias("counter_set"), pl.col("s_name").alias("counter"), pl.col("s_name").alias("raw_name"),
        pl.col("s_val").str.strip_chars().alias("v"), not_port.alias("not_port"))
    parts = [sysfs]
    if pq_ctx:
        keys = pl.DataFrame({"line_no": list(pq_ctx), "device": [c[0] for c in pq_ctx.values()],
                             "port": [c[1] for c in pq_ctx.values()], "counter_set": [c[2] for c in pq_ctx.values()]},
                            schema={"line_no": pl.Int64, "device": pl.String, "port": pl.Int32, "counter_set": pl.String})
        pq = walk.join(keys, on="line_no", how="inner").select(
            *stamp, pl.col("text"), "device", "port", "counter_set",
            pl.col("p_name").replace_strict(PERFQUERY_TO_SYSFS, default=pl.col("p_name")).alias("counter"),
            pl.col("p_name").alias("raw_name"), pl.col("p_val").alias("v"), pl.lit(False).alias("not_port"))
        parts.append(pq)
    if rdma_rows:
        r = pl.DataFrame(rdma_rows, orient="row", schema={"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "text": pl.String,
                                                         "device": pl.String, "port": pl.Int32, "counter": pl.String, "v": pl.String})
        parts.append(r.select("line_no", "sample_no", "ts", pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled"))
                              .otherwise(pl.lit("none")).alias("ts_quality"), "text", "device", "port",
                              pl.lit("hw_counters").alias("counter_set"), "counter", pl.col("counter").alias("raw_name"), "v",
                              pl.lit(False).alias("not_port")))
    rows = pl.concat(parts).sort("line_no", maintain_order=True)
    rows = rows.with_columns(pl.col("v").cast(pl.UInt64, strict=False).alias("u"))
    ok = (pl.col("u").is_not_null() & (pl.col("u") <= INT64_MAX) & ~pl.col("v").str.starts_with("+")
          & ~pl.col("not_port"))
    wrong = rows.filter(~ok)
    for line_no, text, v, not_port in wrong.select("line_no", "text", "v", "not_port").iter_rows():
        bad.append((line_no, text, gids.NOT_PORT if not_port else
                    "counter value is not an unsigned 63-bit integer" if v else "no counter value"))
    return rows.filter(ok).select("line_no", "sample_no", "ts", "ts_quality", "device", "port", "counter_set", "counter",
                                  "raw_name", pl.col("u").cast(pl.Int64).alias("value"))


