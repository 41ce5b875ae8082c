"""Plain one-thread Python `re` line-loop parsers: the baselines `parse_throughput.py` compares each
source's parser with. Each reads a file line by line, extracts the same main fields as the
source's parser and writes them to zstd Parquet in batches (bounded memory, like the ingest), and
returns the number of lines read.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

COMPRESSION = "zstd"  # the baselines' Parquet codec (forensics writes with forensics.ingest.sink.COMPRESSION)

# ------------------------------------------------------------------------------------------------
# baselines: straightforward line-by-line `re` parsers writing the same main fields to Parquet
# ------------------------------------------------------------------------------------------------
class _Columns:
    """Column lists flushed to a Parquet file every `flush` rows (bounded memory, like ingest)."""

    def __init__(self, path: Path, names: list[str], flush: int = 500_000):
        import pyarrow.parquet as pq

        self.pq, self.path, self.names, self.flush = pq, path, names, flush
        self.cols: dict[str, list] = {n: [] for n in names}
        self.writer = None
        self.n = 0

    def add(self, row: tuple) -> None:
        for name, v in zip(self.names, row):
            self.cols[name].append(v)
        self.n += 1
        if self.n % self.flush == 0:
            self._write()

    def _write(self) -> None:
        import pyarrow as pa

        # a later batch whose column is all None (no watchdog line in it) takes the first batch's types
        table = pa.table(self.cols) if self.writer is None else pa.table(self.cols, schema=self.writer.schema)
        if self.writer is None:
            self.writer = self.pq.ParquetWriter(self.path, table.schema, compression=COMPRESSION)
        self.writer.write_table(table)
        self.cols = {n: [] for n in self.names}

    def close(self) -> None:
        if any(self.cols[self.names[0]]) or self.writer is None:
            self._write()
        self.writer.close()


def baseline_nccl(path: Path, out: Path) -> int:
    pre = re.compile(r"^(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) |\[\d+,(\d+)\]<std\w+>: ?|"
                     r" *(\d+): |\[(\d+)\] )*(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\] )?")
    hdr = re.compile(r"([^\s:\[\]]+):(\d+):(\d+) \[(\d+)\] (?:(\S+):(\d+)(?: \(([^)]*)\))? )?NCCL (INFO|WARN|TRACE|ABORT) ?(.*)")
    peer = re.compile(r"(?:from peer|from|to|peer) (\S*<\d+>)")
    ib = re.compile(r"with (?:error |status=)(\d+).*vendor err (\d+)")
    chain = re.compile(r"^(\S+):(\d+) -> (-?\d+)")
    comm = re.compile(r"comm (0x[0-9a-f]+) rank (\d+) n[Rr]anks (\d+)")
    commid = re.compile(r"commId (0x[0-9a-f]+)")
    via = re.compile(r" via (.+)$")
    env = re.compile(r"^(\w+) set by environment to (.*?)\.?$")
    wd = re.compile(r"\[(?:rank(\d+)\]:\[)?([EWIF])(?:(\d{3,4}) ([\d:.]+)(?: +\d+)? ?)?\s?(\S+):(\d+)\] (.*)")
    seq = re.compile(r"SeqNum=(\d+), OpType=(\w+).*Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds")
    hcas = re.compile(r"[\w.-]+:\d+/(?:IB|RoCE)")
    boot = re.compile(r"Using (?:\[\d+\])?(\S+)")
    gdr = re.compile(r"HCA (\w+)(?: '([^'\s]+))?")
    log = _Columns(out / "nccl_log.parquet", ["line_no", "host", "pid", "tid", "cuda_dev", "level", "src_file", "src_line",
                                              "kind", "message", "peer_addr", "ib_status", "vendor_err", "comm_id",
                                              "nranks", "rank", "retcode", "prefix", "ts", "seq", "op_type",
                                              "timeout_ms", "ran_ms"])
    cfg = _Columns(out / "nccl_config.parquet", ["line_no", "host", "pid", "key", "value"])
    unp = _Columns(out / "unparsed.parquet", ["line_no", "text", "reason"])
    n = 0
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            p = pre.match(line)
            body, rank = line[p.end():], p.group(2) or p.group(3) or p.group(4)
            ts = None
            if p.group(1):  # RFC 3339 (exact); nanoseconds cut to microseconds
                ts = dt.datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", p.group(1)).replace("Z", "+00:00"))
            elif p.group(5):  # NCCL [%F %T] stamp: local time, here UTC
                ts = dt.datetime.fromisoformat(p.group(5)).replace(tzinfo=dt.timezone.utc)
            m = hdr.match(body) if " NCCL " in body else None
            if m is None:
                w = wd.search(line) if "NCCL" in line else None
                if w:
                    s = seq.search(w.group(7))
                    if w.group(3):  # glog "E1130 10:15:02.123456": year from the capture
                        md = w.group(3).zfill(4)
                        ts = dt.datetime.fromisoformat(f"2026-{md[:2]}-{md[2:]} {w.group(4)[:15]}").replace(tzinfo=dt.timezone.utc)
                    log.add((n, None, None, None, None, w.group(2), w.group(5), int(w.group(6)), "watchdog", w.group(7),
                             None, None, None, None, None, int(w.group(1)) if w.group(1) else None, None, None, ts,
                             int(s.group(1)) if s else None, s.group(2) if s else None,
                             int(s.group(3)) if s else None, int(s.group(4)) if s else None))
                else:
                    unp.add((n, line, "not an NCCL line"))
                continue
            host, pid, tid, dev, sf, sl, _func, level, msg = m.groups()
            kind = "other"
            pa_ = st = ve = rc = cid = nr = None
            if "Got completion" in msg:
                kind = "ib_completion_error"
                x, y = ib.search(msg), peer.search(msg)
                st, ve = (int(x.group(1)), int(x.group(2))) if x else (None, None)
                pa_ = y.group(1) if y else None
            elif " -> " in msg and chain.match(msg):
                kind = "error_chain"
                x = chain.match(msg)
                sf, sl, rc = sf or x.group(1), sl or x.group(2), int(x.group(3))
            elif "failed" in msg or "closed by" in msg:
                kind = "socket_error"
                y = peer.search(msg)
                pa_ = y.group(1) if y else None
            elif "Init COMPLETE" in msg or "Init START" in msg or " nNodes " in msg:
                kind = "init_complete" if "COMPLETE" in msg else "init"
                x, y = comm.search(msg), commid.search(msg)
                if x:
                    cid, nr = (y.group(1) if y else x.group(1)), int(x.group(3))
                    rank = rank or x.group(2)
                    cfg.add((n, host, int(pid), "nranks", x.group(3)))
            elif msg.startswith(("Channel ", "Ring ")):
                kind = "channel"
                x = via.search(msg)
                if x:
                    cfg.add((n, host, int(pid), "channel_transport", x.group(1)))
            elif " set by environment to " in msg:
                kind = "env"
                x = env.match(msg)
                if x:
                    cfg.add((n, host, int(pid), "env." + x.group(1), x.group(2)))
            elif msg.startswith("Using network "):
                kind = "net"
                cfg.add((n, host, int(pid), "net", msg[14:]))
            elif msg.startswith(("NET/", "Bootstrap")):
                kind = "net"
                if msg.startswith("NET/IB : Using"):
                    for hca in hcas.findall(msg):
                        cfg.add((n, host, int(pid), "ib_hca", hca))
                elif msg.startswith("Bootstrap"):
                    x = boot.search(msg)
                    if x:
                        cfg.add((n, host, int(pid), "bootstrap_if", x.group(1)))
                elif "No plugin found" in msg:
                    cfg.add((n, host, int(pid), "net_plugin", "internal"))
            elif "GPU Direct RDMA" in msg:
                kind = "gdr"
                x = gdr.search(msg)
                if x:
                    cfg.add((n, host, int(pid), "gdr." + (x.group(2) or x.group(1)), "enabled" if "nabled" in msg else "disabled"))
            elif msg.startswith("NCCL version "):
                kind = "version"
                cfg.add((n, host, int(pid), "version", msg.split()[2]))
            log.add((n, host, int(pid), int(tid), int(dev), level, sf, int(sl) if sl else None, kind, msg, pa_, st, ve,
                     cid, nr, int(rank) if rank else None, rc, line[:p.end()].rstrip() or None, ts, None, None, None, None))
    for c in (log, cfg, unp):
        c.close()
    return n


def baseline_ethtool(path: Path, out: Path) -> int:
    marker = re.compile(r'^#### forensics-sample ts=(\S+)(?: argv="(.*)")?\s*$')
    stat = re.compile(r"^\s*(?:\[(\d+)\]: )?(.+?)\s*: (-?\d+)\s*$")
    queue = re.compile(r"^(?:(rx|tx)(\d+)_(.+)|(rx|tx)_queue_(\d+)_(.+)|(tx|rx)-(\d+)\.(.+)|(.+)_(\d+)\.nic)$")
    rows = _Columns(out / "nic_counters.parquet", ["line_no", "ts", "sample_no", "iface", "counter", "queue", "value"])
    unp = _Columns(out / "unparsed.parquet", ["line_no", "text", "reason"])
    ts, sample, n = None, -1, 0
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            m = marker.match(line) if line.startswith("####") else None
            if m:
                ts, sample = dt.datetime.fromisoformat(m.group(1)), sample + 1
                continue
            if not line.strip() or line.startswith("NIC statistics"):
                continue
            s = stat.match(line)
            if not s:
                unp.add((n, line, "not a counter line"))
                continue
            name, q = s.group(2), s.group(1)
            qm = queue.match(name)
            if qm:
                g = [x for x in qm.groups() if x is not None]
                if len(g) == 3 and g[0] in ("rx", "tx"):
                    name, q = f"{g[0]}_{g[2]}", g[1]
                elif len(g) == 2:
                    name, q = g[0], g[1]
            rows.add((n, ts, sample, "ens1f0np0", name, int(q) if q else None, int(s.group(3))))
    rows.close()
    unp.close()
    return n


def baseline_dmesg(path: Path, out: Path) -> int:
    iso = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{6})([+-]\d\d:?\d\d) (.*)$")
    mono = re.compile(r"^\[\s*(\d+\.\d+)\] (.*)$")
    subsys = re.compile(r"^([A-Za-z][\w-]*)(?: ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]))?: ")
    xid = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+), (.*)")
    pci = re.compile(r"\b([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])\b")
    rows = _Columns(out / "kernel_log.parquet", ["line_no", "ts", "mono_s", "subsystem", "pci_addr", "xid", "xid_text",
                                                 "message"])
    unp = _Columns(out / "unparsed.parquet", ["line_no", "text", "reason"])
    n = 0
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            ts = mono_s = None
            m = iso.match(line)
            if m:
                ts = dt.datetime.fromisoformat(f"{m.group(1)}.{m.group(2)}{m.group(3)}")
                msg = m.group(4)
            else:
                m2 = mono.match(line)
                if not m2:
                    unp.add((n, line, "not a kernel log line"))
                    continue
                mono_s, msg = float(m2.group(1)), m2.group(2)
            s, x, p = subsys.match(msg), xid.search(msg), pci.search(msg)
            rows.add((n, ts, mono_s, s.group(1) if s else None, (x.group(1) if x else None) or (p.group(1) if p else None),
                      int(x.group(2)) if x else None, x.group(3) if x else None, msg))
    rows.close()
    unp.close()
    return n


_SYSSTAT_HEAD = re.compile(r"^Linux \S+ \((\S+)\)\s+(\d\d)/(\d\d)/(\d\d(?:\d\d)?)\s")


def _sysstat_date(line: str) -> dt.date | None:
    m = _SYSSTAT_HEAD.match(line)
    if not m:
        return None
    y = int(m.group(4))
    return dt.date(y + 2000 if y < 100 else y, int(m.group(2)), int(m.group(3)))


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def baseline_sar(path: Path, out: Path) -> int:
    """`sar -u` / `sar -P ALL` text (24-hour times, C locale): the date from the banner, the columns from
    each header line, one row per (time, CPU) with every % column; `Average:` rows skipped."""
    row = re.compile(r"^(\d\d):(\d\d):(\d\d)(?: ([AP]M))?\s+(\S+)\s+(.*)$")
    rows = _Columns(out / "cpu_util.parquet", ["line_no", "ts", "cpu", "user_pct", "nice_pct", "system_pct",
                                               "iowait_pct", "steal_pct", "idle_pct"])
    unp = _Columns(out / "unparsed.parquet", ["line_no", "text", "reason"])
    day, cols, n = None, None, 0
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if line.startswith("Linux "):
                day = _sysstat_date(line)
                continue
            if line.startswith("Average:"):
                continue
            m = row.match(line)
            if not m or day is None:
                unp.add((n, line, "not a sar line"))
                continue
            fields = m.group(6).split()
            if m.group(5) == "CPU":
                cols = {name.lstrip("%"): i for i, name in enumerate(fields)}
                continue
            if cols is None:
                unp.add((n, line, "no header"))
                continue
            ts = dt.datetime(day.year, day.month, day.day, int(m.group(1)), int(m.group(2)), int(m.group(3)),
                             tzinfo=dt.timezone.utc)
            v = [_num(x) for x in fields]
            get = lambda k: v[cols[k]] if k in cols else None  # noqa: E731
            cpu = m.group(5)
            rows.add((n, ts, -1 if cpu == "all" else int(cpu), get("user") if "user" in cols else get("usr"), get("nice"),
                      get("system") if "system" in cols else get("sys"), get("iowait"), get("steal"), get("idle")))
    rows.close()
    unp.close()
    return n


def baseline_iostat(path: Path, out: Path) -> int:
    """`iostat -x -t` text: the time stamp lines, the avg-cpu values below their header, and one row per
    device with every column of its header."""
    stamp = re.compile(r"^(\d\d)/(\d\d)/(\d\d(?:\d\d)?) (\d\d):(\d\d):(\d\d)(?: ([AP]M))?$")
    disk = _Columns(out / "disk_io.parquet", ["line_no", "ts", "device", "r_s", "w_s", "rkb_s", "wkb_s", "r_await_ms",
                                              "w_await_ms", "aqu_sz", "util_pct"])
    cpu = _Columns(out / "cpu_util.parquet", ["line_no", "ts", "user_pct", "nice_pct", "system_pct", "iowait_pct",
                                              "steal_pct", "idle_pct"])
    unp = _Columns(out / "unparsed.parquet", ["line_no", "text", "reason"])
    ts, cols, want_cpu, n = None, None, False, 0
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                cols = None
                continue
            if line.startswith("Linux "):
                continue
            m = stamp.match(line)
            if m:
                y = int(m.group(3))
                ts = dt.datetime(y + 2000 if y < 100 else y, int(m.group(1)), int(m.group(2)), int(m.group(4)),
                                 int(m.group(5)), int(m.group(6)), tzinfo=dt.timezone.utc)
                continue
            if line.startswith("avg-cpu:"):
                want_cpu = True
                continue
            fields = line.split()
            if want_cpu:
                want_cpu = False
                v = [_num(x) for x in fields]
                if len(v) == 6:
                    cpu.add((n, ts, *v))
                    continue
            if fields[0] in ("Device", "Device:"):
                cols = {name: i for i, name in enumerate(fields)}
                continue
            if cols is None or len(fields) != len(cols):
                unp.add((n, line, "not an iostat line"))
                continue
            v = [_num(x) for x in fields]
            get = lambda k: v[cols[k]] if k in cols else None  # noqa: E731
            disk.add((n, ts, fields[0], get("r/s"), get("w/s"), get("rkB/s"), get("wkB/s"), get("r_await"),
                      get("w_await"), get("aqu-sz") if "aqu-sz" in cols else get("avgqu-sz"), get("%util")))
    for c in (disk, cpu, unp):
        c.close()
    return n


def baseline_nvidia_smi(path: Path, out: Path) -> int:
    """`nvidia-smi --query-gpu=... --format=csv` series: the header names the columns; each row split at
    ", ", units and "[N/A]" stripped, the time stamp parsed, numbers cast, the clock event bit mask read."""
    rows = _Columns(out / "gpu_samples.parquet", ["line_no", "ts", "gpu", "uuid", "pci_bus", "util_pct", "mem_util_pct",
                                                  "temp_c", "power_w", "sm_clock_mhz", "mem_clock_mhz", "mem_used_mib",
                                                  "pstate", "event_reasons"])
    unp = _Columns(out / "unparsed.parquet", ["line_no", "text", "reason"])
    unit = re.compile(r"\s*(?:%|W|MHz|MiB|C)$")
    cols, n = None, 0

    def num(text: str | None) -> float | None:
        if text is None or text.startswith("[") or text == "N/A":
            return None
        return _num(unit.sub("", text))

    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split(", ")
            if fields[0] == "timestamp" or cols is None:
                cols = {re.sub(r" \[.*\]$", "", name.strip()): i for i, name in enumerate(fields)}
                continue
            if len(fields) != len(cols):
                unp.add((n, line, "not a query-gpu row"))
                continue
            get = lambda k: fields[cols[k]] if k in cols else None  # noqa: E731
            ts = dt.datetime.strptime(get("timestamp"), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)
            reasons = get("clocks_event_reasons.active") or get("clocks_throttle_reasons.active")
            rows.add((n, ts, int(get("index")), get("uuid"), get("pci.bus_id"), num(get("utilization.gpu")),
                      num(get("utilization.memory")), num(get("temperature.gpu")), num(get("power.draw")),
                      num(get("clocks.sm")), num(get("clocks.mem")), num(get("memory.used")), get("pstate"),
                      int(reasons, 16) if reasons and reasons.startswith("0x") else None))
    rows.close()
    unp.close()
    return n


BASELINES = {"nccl": baseline_nccl, "ethtool": baseline_ethtool, "dmesg": baseline_dmesg, "sar": baseline_sar,
             "iostat": baseline_iostat, "nvidia_smi": baseline_nvidia_smi}

