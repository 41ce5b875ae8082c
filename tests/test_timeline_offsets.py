"""Clock offsets across hosts from shared moments (NCCL init, watchdog timeouts, link down)."""
from __future__ import annotations

import datetime as dt
import random

import polars as pl

import forensics
from forensics import timeline
from test_db_kit import T0, at, bundle_dir

HOSTS = [f"node{i:02d}" for i in range(1, 9)]


def _skews(seed=7, max_s=2.0):
    rng = random.Random(seed)
    return {h: rng.uniform(-max_s, max_s) for h in HOSTS}


def _stamp(true_s: float, offset: float, resolution: float = 0.001) -> dt.datetime:
    """What the host's clock prints: true time + offset, truncated to the stamp's resolution."""
    seen = true_s + offset
    seen = (seen // resolution) * resolution
    return T0 + dt.timedelta(seconds=round(seen, 6))


def _nccl_rows(skew, comms=4, timeouts=2, ranks_per_host=8, resolution=0.001, seed=1, hosts=HOSTS):
    rng = random.Random(seed)
    rows = []
    for c in range(comms):
        t = 30.0 + 97.3 * c + rng.random()
        for h in hosts:
            for r in range(ranks_per_host):
                rank = hosts.index(h) * ranks_per_host + r
                rows.append({"host": h, "ts": _stamp(t + rng.uniform(0, 0.01), skew[h], resolution),
                             "ts_quality": "local", "level": "INFO", "kind": "init_complete", "rank": rank,
                             "comm_id": f"0x{c + 1:016x}", "nranks": len(hosts) * ranks_per_host,
                             "message": f"ncclCommInitRank comm 0x{rank:x} rank {rank} nranks 64 - Init COMPLETE"})
    for k in range(timeouts):
        start = 1000.0 + 311.7 * k + rng.random()
        for h in hosts:
            for r in range(ranks_per_host):
                ran_ms = 600000 + rng.randint(0, 900)  # watchdog polls: the timeout moment differs per rank
                seen_start = start + rng.uniform(0, 0.008)
                rows.append({"host": h, "ts": _stamp(seen_start + ran_ms / 1000, skew[h], 0.000001),
                             "ts_quality": "local", "level": "ERROR", "kind": "watchdog_timeout",
                             "rank": hosts.index(h) * ranks_per_host + r, "seq": 4711 + k, "op_type": "ALLREDUCE",
                             "ran_ms": ran_ms, "timeout_ms": 600000, "message": "Watchdog caught collective operation timeout"})
    return rows


def _relative(clock: pl.DataFrame, ref: str) -> dict[str, float]:
    d = dict(zip(clock["host"], clock["clock_offset_s"]))
    return {h: v - d[ref] for h, v in d.items() if v is not None}


def _assert_close(est: dict[str, float], skew: dict[str, float], ref: str, tol: float):
    for h, v in est.items():
        assert abs(v - (skew[h] - skew[ref])) < tol, (h, v, skew[h] - skew[ref])


def test_eight_hosts_skewed_up_to_2s_are_recovered_within_50ms(tmp_path):
    skew = _skews()
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nccl_log": _nccl_rows(skew)}))
    clock = b.sql("SELECT host, clock_offset_s, clock_offset_confidence, clock_offset_method, clock_anchors "
                  "FROM hosts ORDER BY host")
    assert clock["host"].to_list() == HOSTS
    assert clock["clock_offset_s"].null_count() == 0
    _assert_close(_relative(clock, "node01"), skew, "node01", 0.05)
    assert set(clock["clock_offset_confidence"]) == {"high"}
    assert clock["clock_anchors"].to_list() == [6] * 8
    assert "nccl_init x4" in clock["clock_offset_method"][0] and "nccl_timeout x2" in clock["clock_offset_method"][0]
    # without NTP information the median host is the reference (offset exactly 0)
    assert (clock["clock_offset_s"] == 0).sum() == 1


def test_aligned_timestamps_use_the_offsets(tmp_path):
    skew = _skews(seed=3)
    rows = _nccl_rows(skew, comms=3, timeouts=0)
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nccl_log": rows}))
    spread = b.sql("SELECT comm, max(t) - min(t) AS raw_s, max(ta) - min(ta) AS aligned_s FROM ("
                   "  SELECT n.comm_id AS comm, epoch_s(e.ts) AS t, epoch_s(e.ts_aligned) AS ta"
                   "  FROM events e JOIN nccl_log n USING (host, file, line_no)"
                   "  WHERE e.kind = 'nccl_init_complete') GROUP BY comm").rows()
    for _, raw_s, aligned_s in spread:
        assert raw_s > 1.0 and aligned_s < 0.06


def test_hosts_chained_through_other_hosts_and_hosts_without_anchors(tmp_path):
    skew = _skews(seed=11)
    skew["node09"] = 1.7
    skew["lonely"] = -0.8
    rows = _nccl_rows(skew, comms=3, timeouts=1)
    # node09 only shares a sub-communicator with node08
    rows += _nccl_rows(skew, comms=3, timeouts=0, hosts=["node08", "node09"], seed=5, ranks_per_host=2)
    for r in rows[-12:]:
        r["comm_id"] = "0xfeed" + r["comm_id"][-4:]
    b = forensics.open_bundle(bundle_dir(tmp_path, {
        "nccl_log": rows,
        "kernel_log": [{"host": "lonely", "ts": at(5), "ts_quality": "boot", "message": "EXT4-fs mounted"}],
    }))
    clock = b.sql("SELECT host, clock_offset_s, clock_offset_confidence FROM hosts ORDER BY host")
    conf = dict(zip(clock["host"], clock["clock_offset_confidence"]))
    assert conf["lonely"] == "unknown"
    assert clock.filter(pl.col("host") == "lonely")["clock_offset_s"].item() is None
    est = _relative(clock, "node01")
    assert "lonely" not in est
    _assert_close(est, skew, "node01", 0.05)
    # an unknown offset leaves the host's times as they are
    e = b.sql("SELECT ts, ts_aligned FROM events WHERE host = 'lonely'").row(0)
    assert e[0] == e[1]


def test_outlier_anchor_and_reused_ids_do_not_spoil_the_estimate(tmp_path):
    skew = _skews(seed=5)
    rows = _nccl_rows(skew, comms=5, timeouts=1)
    # one host prints one communicator's COMPLETE 40 s late (e.g. a reused comm pointer): all its ranks
    bad = [r for r in rows if r["host"] == "node03" and r.get("comm_id") == "0x0000000000000002"]
    for r in bad:
        r["ts"] = r["ts"] + dt.timedelta(seconds=40)
    # and one rank of another host disagrees with its host's other ranks by minutes: that anchor is dropped
    odd = next(r for r in rows if r["host"] == "node05" and r.get("comm_id") == "0x0000000000000003")
    odd["ts"] = odd["ts"] + dt.timedelta(minutes=3)
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nccl_log": rows}))
    clock = b.sql("SELECT host, clock_offset_s FROM hosts ORDER BY host")
    _assert_close(_relative(clock, "node01"), skew, "node01", 0.05)


def test_second_resolution_stamps_are_not_biased_by_truncation(tmp_path):
    # NCCL's default "[%F %T] " stamps whole seconds: the median of differences of truncated times
    # is off by up to 1 s; the trimmed mean over many anchors is not
    skew = {h: v for h, v in _skews(seed=9).items()}
    rows = _nccl_rows(skew, comms=40, timeouts=0, ranks_per_host=1, resolution=1.0, seed=2)
    obs = timeline.estimate(_anchors_from_rows(rows))
    ref = "node01"
    for h in HOSTS:
        assert abs((obs[h]["offset"] - obs[ref]["offset"]) - (skew[h] - skew[ref])) < 0.25, h
    clock = forensics.open_bundle(bundle_dir(tmp_path, {"nccl_log": rows})).sql(
        "SELECT DISTINCT clock_offset_confidence FROM hosts").rows()
    assert clock == [("medium",)]


def _anchors_from_rows(rows):
    return pl.DataFrame([(r["host"], "nccl_init", r["comm_id"], r["ts"].timestamp(), True) for r in rows],
                        schema={"host": pl.String, "kind": pl.String, "key": pl.String, "t": pl.Float64,
                                "coarse": pl.Boolean}, orient="row")


def test_ntp_offsets_fix_the_constant_and_confirm_the_anchors(tmp_path):
    skew = _skews(seed=21, max_s=0.5)
    with_ntp = ("node02", "node05", "node07")
    hosts = [{"host": h, "ntp_offset_s": round(skew[h], 4) if h in with_ntp else None} for h in HOSTS]
    hosts[HOSTS.index("node08")]["ntp_offset_s"] = skew["node08"] + 0.7  # a host whose NTP claim is wrong
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nccl_log": _nccl_rows(skew, comms=3), "hosts": hosts}))
    clock = {r[0]: r[1:] for r in b.sql("SELECT host, clock_offset_s, clock_offset_confidence, clock_offset_method "
                                        "FROM hosts ORDER BY host").rows()}
    for h, (v, conf, method) in clock.items():
        assert abs(v - skew[h]) < 0.05, h  # absolute, not only relative
        if h in with_ntp:
            assert v == round(skew[h], 4) and conf == "high" and "confirmed by anchors" in method
        elif h == "node08":
            assert "disagrees by 0.7" in method
        else:
            assert method.endswith("vs NTP")


def test_ntp_alone_and_single_host(tmp_path):
    b = forensics.open_bundle(bundle_dir(tmp_path, {"hosts": [{"host": "a", "ntp_offset_s": 0.004},
                                                              {"host": "b"}]}))
    assert b.sql("SELECT host, clock_offset_s, clock_offset_confidence FROM hosts ORDER BY host").rows() == [
        ("a", 0.004, "medium"), ("b", None, "unknown")]


def test_link_down_seen_by_both_ends(tmp_path):
    skew = {"node01": 0.0, "node02": 1.234}
    kl = []
    for i, t in enumerate([100.0, 400.0, 900.0]):
        for h, iface in (("node01", "ens1f0np0"), ("node02", "ens2f0np0")):
            kl.append({"host": h, "ts": _stamp(t, skew[h], 0.000001), "ts_quality": "boot", "iface": iface,
                       "subsystem": "mlx5_core", "message": f"mlx5_core 0000:18:00.0 {iface}: Link down"})
    kl.append({"host": "node01", "ts": at(2000), "ts_quality": "boot", "message": "mlx5_core 0000:18:00.0 x: Link down"})
    obs = timeline.anchors_from_link_rows([(r["host"], r["ts"].timestamp(), r["iface"] or "") for r in kl
                                           if r.get("iface")] + [("node01", at(2000).timestamp(), "x")])
    assert len({o[2] for o in obs}) == 3  # the lone event at 2000 s is no anchor
    b = forensics.open_bundle(bundle_dir(tmp_path, {"kernel_log": kl}))
    clock = b.sql("SELECT host, clock_offset_s, clock_offset_method FROM hosts ORDER BY host").rows()
    assert abs((clock[1][1] - clock[0][1]) - 1.234) < 0.001
    assert "link_down x3" in clock[0][2]


def test_robust_center_does_not_depend_on_the_order_of_its_differences():
    """The offset chain collects a host's differences in set order (string hashing: another order in each
    process); the centre is the same to the last bit in every order (math.fsum, not a float sum)."""
    import random

    from forensics.timeline import robust_center

    rng = random.Random(1)
    diffs = [rng.gauss(0.0457, 0.003) + rng.random() * 1e-3 for _ in range(40)]
    centres = set()
    for _ in range(200):
        rng.shuffle(diffs)
        centres.add(robust_center(diffs))
    assert len(centres) == 1
