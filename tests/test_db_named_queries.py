"""Named queries (queries/*.sql): catalog, parameters, and the answers on a known 3-host incident."""
from __future__ import annotations

import pytest

import forensics
from forensics.db import QueryError, named
from test_db_kit import at, bundle_dir, sample_tables

REQUIRED = {"window": {"at": "2026-11-30T10:00:12Z"}}


@pytest.fixture(scope="module")
def incident(tmp_path_factory):
    b = forensics.open_bundle(bundle_dir(tmp_path_factory.mktemp("incident"), sample_tables()))
    yield b
    b.close()


def test_catalog_has_the_seed_matrix_questions():
    cat = named.catalog()
    assert len(cat) >= 12
    assert {"pause_rates", "drops", "xid_history", "throttle_episodes", "gpu_util", "io_latency", "cpu_iowait",
            "nccl_warnings", "nccl_config_diff", "numa_layout", "step_time_proxy", "window"} <= set(cat)
    for q in cat.values():
        assert q.description and not q.description.startswith("@param"), q.name
    assert cat["window"].params["at"].required and cat["window"].params["seconds"].default == 60.0


def test_every_named_query_runs_on_an_empty_bundle(tmp_path):
    (tmp_path / "tables").mkdir()
    b = forensics.open_bundle(tmp_path)
    for name in named.catalog():
        assert b.query(name, **REQUIRED.get(name, {})).height == 0, name


def test_answers_on_the_incident(incident):
    q = incident.query
    top = q("pause_rates").row(0, named=True)
    assert (top["host"], top["iface"], top["priority"], top["direction"]) == ("n2", "eth1", "3", "rx")
    assert top["peak_frames_per_s"] == 20000 and top["pause_frames"] == 300000 and top["paused_us"] == 7500000
    assert q("pause_rates", min_rate="1").height == 1

    d = q("drops").rows(named=True)
    assert [(r["host"], r["iface"], r["counter"], r["class"]) for r in d] == [
        ("n3", "eth0", "rx_discards_phy", "drop"), ("n3", "eth0", "sar.rxdrop_s", "drop")]
    assert d[0]["total"] == 2000 and d[0]["peak_per_s"] == 100

    x = q("xid_history").row(0, named=True)
    assert (x["host"], x["gpu"], x["xid"], x["uuid"], x["first_on_host"]) == ("n3", 1, 79, "GPU-n3-1", True)

    t = q("throttle_episodes").rows(named=True)
    assert [(r["host"], r["gpu"], r["reason"], r["duration_s"], r["min_sm_clock_mhz"]) for r in t] == [
        ("n2", 1, "hw_thermal_slowdown", 5.0, 1280.0)]
    assert q("throttle_episodes", min_duration_s="6").height == 0

    g = {r["host"]: r for r in q("gpu_util", bucket_s="3600").rows(named=True)}
    assert g["n2"]["max_temp_c"] == 90 and g["n1"]["max_temp_c"] == 70 and g["n1"]["gpus"] == 2
    assert q("gpu_util", bucket_s="5").height == 3 * 5

    io = q("io_latency").row(0, named=True)
    assert (io["host"], io["device"], io["max_r_await_ms"], io["saturated_samples"]) == ("n1", "nvme0n1", 40.0, 11)

    w = {r["host"]: r["max_iowait_pct"] for r in q("cpu_iowait", bucket_s="3600").rows(named=True)}
    assert w == {"n1": 25.0, "n2": 1.0, "n3": 1.0}

    n = q("nccl_warnings").rows(named=True)
    assert [(r["host"], r["kind"], r["ib_status"], r["vendor_err"]) for r in n] == [
        ("n2", "nccl_ib_completion_error", 12, 129)]

    c = q("nccl_config_diff").rows(named=True)
    assert [(r["key"], r["values"]) for r in c] == [("env.NCCL_BUFFSIZE", ["2097152", "4194304"])]
    assert c[0]["by_host"] == "n1=4194304, n2=4194304, n3=2097152"
    assert q("nccl_config_diff", all_keys="true").height == 3

    numa = {(r["host"], r["node"]): r for r in q("numa_layout", host="n1").rows(named=True)}
    assert numa[("n1", 0)]["gpus"] == ["gpu0 0000:18:00.0"] and numa[("n1", 1)]["nics"] == ["eth1/mlx5_1 0000:5a:00.0"]
    assert numa[("n1", 0)]["processes"] == ["pid 100 gpus 0 cpus 0-3"] and numa[("n1", 1)]["processes"] is None
    assert numa[("n1", 0)]["cpu_span"] == "0-3 (4 CPUs)"

    s = {r["host"]: r for r in q("step_time_proxy").rows(named=True)}
    assert {h: r["bursts"] for h, r in s.items()} == {"n1": 5, "n2": 5, "n3": 5}
    assert s["n1"]["est_step_s"] == pytest.approx(3.8)  # bursts every 4 s over a 19 s window
    assert s["n2"]["clock_vs_median"] < 1 and s["n1"]["clock_vs_median"] == 1

    win = q("window", at="2026-11-30T10:00:12Z", seconds="1").rows(named=True)
    assert [(r["rel_s"], r["host"], r["kind"]) for r in win] == [(0.0, "n2", "nccl_ib_completion_error"),
                                                                (1.0, "n2", "gpu_throttle_end")]
    assert q("window", at="2026-11-30T10:00:12Z", seconds="10", min_severity="critical")["kind"].to_list() == [
        "gpu_throttle_start", "gpu_throttle_end", "gpu_ecc_dbe", "gpu_remap_pending", "xid"]

    lf = q("link_flaps").row(0, named=True)
    assert (lf["host"], lf["iface"], lf["kernel_link_down"], lf["kernel_link_up"], lf["counter_increments"]) == \
        ("n3", "eth0", 1, 1, 1)

    e = q("ecc_remap").row(0, named=True)
    assert (e["host"], e["gpu"], e["dbe_volatile"], e["remap_pending"]) == ("n3", 1, 2, True)

    assert q("clock_offsets").height == 3
    cov = {r["host"]: r["parsed_pct"] for r in q("coverage").rows(named=True)}
    assert cov == {"n1": 100.0, "n2": 98.0, "n3": 100.0}
    assert q("failed_commands")["command"].to_list() == ["dmesg --time-format iso"]

    rates = q("nic_counter_rates", counter_like="rx_packets", host="n1").rows(named=True)
    assert [(r["iface"], r["scope"], r["queues"], r["total"]) for r in rates] == [
        ("eth0", "queues", 2, 60000), ("eth1", "queues", 2, 60000)]
    per_q = q("nic_counter_rates", counter_like="rx_packets", host="n1", per_queue="true")
    assert per_q.height == 4 and sorted(per_q["total"].to_list()) == [20000, 20000, 40000, 40000]


def test_parameter_errors_are_clear(incident):
    with pytest.raises(QueryError, match="parameter at is required"):
        incident.query("window")
    with pytest.raises(QueryError, match="'soon' is not a valid TIMESTAMPTZ"):
        incident.query("window", at="soon")
    with pytest.raises(QueryError, match=r"unknown parameter bogus \(parameters: "):
        incident.query("drops", bogus="1")
    with pytest.raises(QueryError, match="no named query 'nope'"):
        incident.query("nope")
    assert incident.query("window", at=at(12), seconds=0.5).height == 1  # typed values pass through
