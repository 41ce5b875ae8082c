"""The shared timeline as a Chrome trace-event JSON that opens in the Perfetto UI (ui.perfetto.dev)
or chrome://tracing.

One process per host; threads (tracks) for the kernel log, each NCCL rank/process, each GPU and
each NIC; instant events for kernel and NCCL messages; counter tracks for the sampled series (GPU
utilisation, SM clock, temperature, power; NIC pause and byte rates); findings as complete slices
on a "findings" track of each host involved. Times are microseconds on the aligned (reference)
clock. Counter series are thinned to at most `max_points` per track so the file stays small.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

_SEV_COLOUR = {"critical": "terrible", "warning": "bad", "info": "good"}


def _us(ts) -> int:
    return int(ts.timestamp() * 1_000_000)


def build_trace(bundle, findings: pl.DataFrame | None = None, max_points: int = 2000) -> dict:
    hosts = bundle.sql("SELECT host FROM hosts ORDER BY host")["host"].to_list()
    extra = bundle.sql("SELECT DISTINCT host FROM events WHERE host IS NOT NULL ORDER BY host")["host"].to_list()
    hosts = sorted(set(hosts) | set(extra))
    pid = {h: i + 1 for i, h in enumerate(hosts)}
    tids: dict[tuple[str, str], int] = {}
    out: list[dict] = []

    def tid(host: str, track: str) -> int:
        key = (host, track)
        if key not in tids:
            tids[key] = len([k for k in tids if k[0] == host]) + 1
            out.append({"ph": "M", "name": "thread_name", "pid": pid[host], "tid": tids[key], "args": {"name": track}})
        return tids[key]

    for h in hosts:
        out.append({"ph": "M", "name": "process_name", "pid": pid[h], "args": {"name": h}})

    ev = bundle.sql(
        "SELECT ts_aligned, host, source, kind, severity, subject, message FROM events "
        "WHERE ts_aligned IS NOT NULL AND host IS NOT NULL ORDER BY ts_aligned"
    )
    for r in ev.iter_rows(named=True):
        if r["host"] not in pid:
            continue
        track = "kernel" if r["source"] == "dmesg" else f"{r['source']} {r['subject'] or ''}".strip()
        out.append({"ph": "i", "s": "t", "name": r["kind"], "cat": r["source"], "ts": _us(r["ts_aligned"]),
                    "pid": pid[r["host"]], "tid": tid(r["host"], track),
                    "args": {"severity": r["severity"], "subject": r["subject"], "message": (r["message"] or "")[:500]}})

    gpu = bundle.sql(
        "SELECT host, gpu, align_ts(ts, h.clock_offset_s) AS t, util_pct, sm_clock_mhz, temp_c, power_w "
        "FROM gpu_samples g LEFT JOIN hosts h USING (host) WHERE ts IS NOT NULL AND gpu IS NOT NULL ORDER BY host, gpu, t"
    )
    for (host, g), part in gpu.group_by(["host", "gpu"], maintain_order=True):
        if host not in pid:
            continue
        step = max(1, part.height // max_points)
        t = tid(host, f"GPU{g}")
        for r in part.gather_every(step).iter_rows(named=True):
            vals = {k: r[k] for k in ("util_pct", "sm_clock_mhz", "temp_c", "power_w") if r[k] is not None}
            if vals:
                out.append({"ph": "C", "name": f"GPU{g}", "ts": _us(r["t"]), "pid": pid[host], "tid": t, "args": vals})

    nic = bundle.sql(
        "SELECT host, iface, ts_aligned AS t, "
        "sum(rate_per_s) FILTER (WHERE regexp_matches(counter, 'pause') AND NOT regexp_matches(counter, 'duration|transition|storm')) AS pause_per_s, "
        "sum(rate_per_s) FILTER (WHERE counter IN ('rx_bytes_phy', 'tx_bytes_phy')) / 1e6 AS mb_per_s, "
        "sum(rate_per_s) FILTER (WHERE regexp_matches(counter, 'discard|drop|out_of_buffer')) AS drops_per_s "
        "FROM nic_rates WHERE ts_aligned IS NOT NULL GROUP BY ALL ORDER BY host, iface, t"
    )
    for (host, iface), part in nic.group_by(["host", "iface"], maintain_order=True):
        if host not in pid:
            continue
        step = max(1, part.height // max_points)
        t = tid(host, f"NIC {iface}")
        for r in part.gather_every(step).iter_rows(named=True):
            vals = {k: r[k] for k in ("pause_per_s", "mb_per_s", "drops_per_s") if r[k] is not None}
            if vals:
                out.append({"ph": "C", "name": f"NIC {iface}", "ts": _us(r["t"]), "pid": pid[host], "tid": t, "args": vals})

    if findings is not None:
        for f in findings.iter_rows(named=True):
            if f["start"] is None:
                continue
            dur = max(1, _us(f["end"] or f["start"]) - _us(f["start"]))
            for h in f["hosts"] or []:
                if h not in pid:
                    continue
                out.append({"ph": "X", "name": f["kind"], "cat": "finding", "ts": _us(f["start"]), "dur": dur,
                            "pid": pid[h], "tid": tid(h, "findings"), "cname": _SEV_COLOUR.get(f["severity"], "generic_work"),
                            "args": {"severity": f["severity"], "subject": f["subject"], "summary": f["summary"], "id": f["id"]}})
    return {"traceEvents": out, "displayTimeUnit": "ms", "otherData": {"generator": "forensics"}}


def write_trace(bundle, path: Path | str, findings: pl.DataFrame | None = None) -> Path:
    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(build_trace(bundle, findings), default=str))
    tmp.replace(path)
    return path
