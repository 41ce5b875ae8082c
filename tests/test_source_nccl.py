"""Hand-written checks of the values the nccl parser extracts from real NCCL / PyTorch logs."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from fixture_cases import FIXTURES, context_for
from forensics.sources import ParseContext, get, split_lines

NCCL = get("nccl")
UTC = dt.timezone.utc


def parse_fixture(part: str):
    files = [f for f in sorted((FIXTURES / "nccl").glob("nccl--*.txt")) if part in f.name]
    assert len(files) == 1, (part, files)
    return NCCL.parse(files[0].read_bytes(), context_for(files[0]))


def log(res) -> pl.DataFrame:
    return res.tables["nccl_log"]


def cfg(res, key: str | None = None) -> list[tuple]:
    df = res.tables["nccl_config"]
    if key is not None:
        df = df.filter(pl.col("key") == key)
    return df.select("host", "pid", "key", "value").rows()


def row(res, line_no: int) -> dict:
    return log(res).filter(pl.col("line_no") == line_no).row(0, named=True)


def reasons(res) -> dict[int, str]:
    return dict(res.unparsed.select("line_no", "reason").rows())


# --- NCCL WARN lines: IB completion errors, socket errors, error chains ------------------------------
def test_ib_completion_status12_vendor129_roce_mapped_gids():
    res = parse_fixture("issue1814-ib-completion")
    r = row(res, 1)
    assert (r["host"], r["pid"], r["tid"], r["cuda_dev"], r["level"]) == ("hostname-test", 984, 1357, 4, "WARN")
    assert (r["src_file"], r["src_line"], r["kind"]) == ("ib_plugin.c", 1615, "ib_completion_error")
    assert (r["peer_addr"], r["ib_status"], r["vendor_err"]) == ("172.36.143.59<44206>", 12, 129)
    assert "localGid ::ffff:29.87.88.182" in r["message"]
    later = log(res).filter(pl.col("kind") == "ib_completion_error").select("ib_status", "vendor_err").rows()
    assert later == [(12, 129), (5, 249), (5, 249)]
    chain = row(res, 2)
    assert (chain["kind"], chain["src_file"], chain["src_line"], chain["retcode"]) == ("error_chain", "transport/net.cc", 1298, 6)
    assert row(res, 4)["message"] == "proxy.cc:874 -> 6 [Progress Thread]"
    assert res.unparsed.height == 0  # the blank line NCCL prints before each WARN is structure
    assert res.meta["hosts"] == ["hostname-test"]


def test_ib_completion_ipv6_gids():
    res = parse_fixture("issue1405")
    ib = log(res).filter(pl.col("kind") == "ib_completion_error")
    assert ib.select("peer_addr", "ib_status", "vendor_err").rows() == [
        ("10.216.210.236<54862>", 12, 129), ("10.216.210.236<54862>", 12, 129), ("10.216.210.236<49892>", 12, 129)]
    assert log(res).filter(pl.col("kind") == "error_chain")["retcode"].to_list() == [6] * 8


def test_ib_completion_old_formats_quoted_without_host():
    res = parse_fixture("issue-titles-quoted")
    assert res.unparsed.height == 0
    assert row(res, 1)["src_file"] == "transport/net_ib.cu" and row(res, 1)["src_line"] == 788
    assert (row(res, 1)["ib_status"], row(res, 1)["vendor_err"]) == (4, 81)  # "with error 4, ... vendor err 81"
    assert row(res, 2)["peer_addr"] is None  # "from peer with error" (address redacted by the reporter)
    assert row(res, 3)["peer_addr"] == "fe80::966d:ae03:8b:df54%ib0<33397>"
    assert row(res, 3)["host"] == "fixture-host"  # no header: the context's host
    assert cfg(res, "gdr.0") == [("fixture-host", None, "gdr.0", "disabled")]


def test_ib_completion_nccl_2_29_symbolic_status_and_vendor_err():
    """NCCL 2.29 prints the status and opcode by name (NVIDIA/nccl src/transport/net_ib/p2p.cc at
    v2.29.2-1, ncclIbLogCompletionWithError: 'NET/IB: Got completion from peer %s with status=%s(%d)
    opcode=%s(%d) vendor_err=%u  localGid %s remoteGids%s hca %s'). No user paste of this wording was
    found, so the line is that format filled in; before, both numbers were lost (NULL)."""
    line = ("gpu-a:3468:3905 [4] NCCL WARN NET/IB: Got completion from peer 10.216.210.236<54862> with"
            " status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) vendor_err=129 "
            " localGid ::ffff:10.0.0.11 remoteGids::ffff:10.0.0.12 hca mlx5_3\n"
            "gpu-a:3468:3905 [4] NCCL INFO HINT: In many cases this error occurs when the NCCL_IB_TIMEOUT is set too short.\n")
    res = NCCL.parse(line.encode(), ParseContext(host="gpu-a"))
    r = row(res, 1)
    assert (r["kind"], r["peer_addr"], r["ib_status"], r["vendor_err"]) == (
        "ib_completion_error", "10.216.210.236<54862>", 12, 129)
    assert res.unparsed.height == 0


def test_socket_broken_pipe_proxy_connect_retcode_remote_closed():
    res = parse_fixture("issue795")
    r1 = row(res, 1)
    assert (r1["kind"], r1["src_file"], r1["src_line"], r1["peer_addr"]) == (
        "socket_error", "misc/socket.cc", 518, "10.200.84.247<58355>")
    assert row(res, 7)["kind"] == "connect_error" and row(res, 7)["retcode"] == 6
    assert row(res, 7)["message"].startswith("[Proxy Service 9] Failed to execute operation Connect from rank 9")
    r8 = row(res, 8)
    assert r8["kind"] == "remote_closed" and r8["peer_addr"].endswith(".pcluster<47861>")
    assert [row(res, n)["src_file"] for n in range(2, 7)] == [
        "misc/socket.cc", "transport/net_socket.cc", "include/net.h", "transport/net.cc", "proxy.cc"]


def test_socket_progress_conn_reset_chain():
    res = parse_fixture("nccltests-issue185")
    errs = log(res).filter(pl.col("kind") == "socket_error")
    assert errs["peer_addr"].to_list() == ["11.1.128.128<52035>", "11.1.128.128<35201>", "11.1.128.128<43351>"]
    assert set(log(res).filter(pl.col("kind") == "error_chain")["retcode"].to_list()) == {6}


# --- time stamps and prefixes ----------------------------------------------------------------------
def test_k8s_rfc3339_prefix_no_pid_tid_exact_time():
    res = parse_fixture("issue1920")
    r = row(res, 1)
    assert (r["host"], r["pid"], r["tid"], r["cuda_dev"]) == ("gpu-server320", None, None, 5)
    assert r["ts"] == dt.datetime(2025, 11, 24, 3, 20, 21, 1125, tzinfo=UTC) and r["ts_quality"] == "exact"
    assert r["prefix"] == "2025-11-24T03:20:21.001125857Z"  # NCCL's own [%F %T] stamp is not a launcher prefix
    assert (r["kind"], r["peer_addr"]) == ("socket_error", "10.44.137.149<52905>")
    assert row(res, 7)["src_file"] == "bootstrap.cc" and row(res, 7)["retcode"] == 6
    assert log(res)["ts_quality"].unique().to_list() == ["exact"]


def test_nccl_debug_timestamp_warn_is_local_time():
    res = parse_fixture("nvidia-docs-logging")  # ctx: Europe/Berlin
    warn = row(res, 2)
    assert warn["level"] == "WARN" and warn["src_file"] == "plugin/net.cc" and warn["src_line"] == 334
    assert warn["ts"] == dt.datetime(2026, 5, 5, 4, 16, 47, tzinfo=UTC) and warn["ts_quality"] == "local"
    assert row(res, 3)["ts_quality"] == "none"  # INFO lines are not stamped by default
    version = row(res, 1)
    assert (version["level"], version["kind"], version["message"]) == ("VERSION", "version", "NCCL version 2.30.3+cuda13.0")
    assert ("fixture-host", None, "version", "2.30.3+cuda13.0") in cfg(res)
    assert ("node-01", 3873285, "net", "IB") in cfg(res) and ("node-01", 3873285, "net_plugin", "IB") in cfg(res)
    assert ("node-01", 3873285, "dmabuf", "available") in cfg(res)


def test_ray_prefix_and_millisecond_nccl_stamp():
    res = parse_fixture("issue2039")  # ctx: Asia/Shanghai
    r = row(res, 1)
    assert r["ts"] == dt.datetime(2026, 4, 14, 13, 28, 19, 7000, tzinfo=UTC) and r["ts_quality"] == "local"
    assert r["pid"] == 46627 and r["tid"] == 64125 and "ActorClassName=RolloutServerFrontend" in r["prefix"]
    assert r["rank"] is None  # no time of day is mistaken for an srun rank
    assert row(res, 5)["kind"] == "error_chain" and row(res, 5)["retcode"] == 3 and row(res, 5)["level"] == "WARN"
    assert res.unparsed.height == 0 and log(res).height == 4  # line 4 is the WARN's blank line behind the prefix


def test_rank_prefix_and_ib_hcas():
    res = parse_fixture("issue302")
    assert set(log(res)["rank"].to_list()) == {155} and set(log(res)["prefix"].to_list()) == {"[155]"}
    hcas = [v for _, _, _, v in cfg(res, "ib_hca")]
    assert hcas == ["mlx5_1:1/IB", "mlx5_3:1/IB", "mlx5_0:1/IB", "mlx5_2:1/RoCE", "mlx5_4:1/IB"]
    assert [v for *_, v in cfg(res, "oob_if")] == ["eth0:10.100.62.64<0>"]
    assert [v for *_, v in cfg(res, "channel_transport")] == ["P2P/IPC"] * 3  # old "Ring 00 : a -> b via P2P/IPC"
    assert [v for *_, v in cfg(res, "cpu_affinity")] == ["0fffff00,000fffff"]


def test_openmpi_tag_output_ranks_and_nccl_tests_lines():
    res = parse_fixture("awsdoeks-mpi-tag-output")
    assert log(res)["rank"].to_list() == [3, 3, 3, 10, 10, 10]
    assert [v for *_, v in cfg(res, "nchannels")] == ["24", "16"]
    assert res.unparsed.height == 0  # nccl-tests header lines are structure, its rows nccl_tests
    perf = res.tables["nccl_tests"]
    assert perf.select("line_no", "rank", "kind", "size_b", "count", "dtype", "redop", "root", "oop_busbw_gbs",
                       "oop_wrong", "ip_time_us", "ip_busbw_gbs", "avg_busbw_gbs").rows() == [
        (7, 0, "result", 2147483648, 536870912, "float", "sum", -1, 468.60, 0, 8019.5, 468.62, None),
        (8, 0, "avg_busbw", None, None, None, None, None, None, None, None, None, 114.556),
        (15, 0, "result", 2147483648, 536870912, "float", "sum", -1, 438.85, 0, 9166.2, 439.28, None),
        (16, 0, "avg_busbw", None, None, None, None, None, None, None, None, None, 53.2202)]
    assert res.meta["variant"] == "nccl+prefixed+nccl-tests"


def test_srun_label_prefixed_nccl_tests_output_is_counted():
    res = parse_fixture("issue290-srun-label")
    assert res.lines == 38 and res.unparsed.height == 0 and log(res).height == 0  # line 38 " 0:" is structure
    perf = res.tables["nccl_tests"]
    assert perf.group_by("kind").len().sort("kind").rows() == [
        ("avg_busbw", 1), ("device", 16), ("out_of_bounds", 1), ("params", 1), ("result", 11)]
    assert set(perf["rank"].to_list()) == {0}  # the srun -l label
    dev = perf.filter(pl.col("kind") == "device")
    assert dev.select("test_rank", "test_host", "pid", "cuda_dev", "gpu").row(8) == (
        8, "node007", 541703, 0, "NVIDIA H100 80GB HBM3")
    first = perf.filter(pl.col("kind") == "result").row(0, named=True)  # validation off: #wrong printed N/A
    assert (first["size_b"], first["oop_time_us"], first["oop_busbw_gbs"], first["oop_wrong"], first["ip_busbw_gbs"],
            first["root"]) == (8388608, 215.3, 73.04, None, 87.38, -1)
    assert res.meta["variant"] == "nccl-tests"


def test_host_cut_lines_keep_device_and_old_ring_transports():
    res = parse_fixture("issue392")
    assert res.unparsed.height == 0
    assert set(log(res)["cuda_dev"].to_list()) == {0} and set(log(res)["host"].to_list()) == {"fixture-host"}
    assert [v for *_, v in cfg(res, "channel_transport")] == [
        "NET/IB/0", "P2P/IPC", "direct shared memory", "NET/IB/0", "P2P/IPC"]
    assert [v for *_, v in cfg(res, "nchannels")] == ["2"]
    assert [v for *_, v in cfg(res, "version")] == ["2.5.7+cuda10.0"]
    assert [(k, v) for _, _, k, v in cfg(res) if k.startswith("env.")] == [
        ("env.NCCL_IB_DISABLE", "0"), ("env.NCCL_IB_GID_INDEX", "3")]  # "set by environment to 3." -> 3


# --- configuration ---------------------------------------------------------------------------------
def test_socket_fallback_run_with_nccl_tests_interleaved():
    res = parse_fixture("aws-2xa10g")
    assert sorted(cfg(res, "net")) == [("ip-10-0-139-244", 1465, "net", "Socket"), ("ip-10-0-142-242", 46, "net", "Socket")]
    assert set(v for *_, v in cfg(res, "channel_transport")) == {"NET/Socket/0"}
    assert [v for *_, v in cfg(res, "net_plugin")] == ["internal", "internal"]
    assert [v for *_, v in cfg(res, "socket_if")] == ["eth0:10.0.139.244<0>", "eth0:10.0.142.242<0>"]
    assert [v for *_, v in cfg(res, "version")] == ["2.11.4+cuda11.4"]
    done = log(res).filter(pl.col("kind") == "init_complete")
    assert done.select("host", "rank", "nranks", "comm_id").rows() == [
        ("ip-10-0-139-244", 0, 2, "0x7f85a4000fa0"), ("ip-10-0-142-242", 1, 2, "0x7f7dec000fa0")]
    why = reasons(res)
    assert why[1].startswith("shell prompt") and why[2] == "not an NCCL line" and len(why) == 3
    perf = res.tables["nccl_tests"]
    res_rows = perf.filter(pl.col("kind") == "result")
    # nccl-tests 2.11-era table: no root column, a max "error" (0e+00) instead of the #wrong count
    assert res_rows.height == 25 and res_rows["root"].null_count() == 25 and res_rows["oop_wrong"].null_count() == 25
    assert res_rows.select("line_no", "size_b", "oop_time_us", "oop_error", "ip_time_us").row(0) == (
        50, 8, 172.7, 0.0, 168.9)
    assert perf.filter(pl.col("kind") == "avg_busbw")["avg_busbw_gbs"].to_list() == [0.300212]
    assert perf.filter(pl.col("kind") == "out_of_bounds")["wrong_total"].to_list() == [0]
    structure = 77 - log(res).height - res.unparsed.height - perf.height  # '#' and column-header lines
    assert res.lines == 77 and structure == 6  # lines 4, 5, 45-48


def test_gdrdma_channels_and_gdr_level_env():
    res = parse_fixture("aks-pr36")
    assert [v for *_, v in cfg(res, "env.NCCL_NET_GDR_LEVEL")] == ["SYS"] * 8
    transports = [v for *_, v in cfg(res, "channel_transport")]
    assert transports[:3] == ["NET/IB/0/GDRDMA", "NET/IB/0/GDRDMA", "NET/IB/4/GDRDMA"] and len(transports) == 7
    res = parse_fixture("issue707")
    assert {v for *_, v in cfg(res, "channel_transport")} == {
        "NET/IB/5/GDRDMA", "NET/IB/2/GDRDMA", "NET/IB/0/GDRDMA", "NET/IB/4/GDRDMA"}


def test_gdr_disabled_per_hca_and_init_start():
    res = parse_fixture("issue1537")
    assert [(k, v) for _, _, k, v in cfg(res) if k.startswith("gdr.")] == [("gdr.mlx5_0", "disabled"), ("gdr.mlx5_1", "disabled")]
    start = log(res).filter(pl.col("kind") == "init_start").row(0, named=True)
    assert (start["comm_id"], start["nranks"], start["rank"]) == ("0x65e0bd6ee7449db4", 16, 0)


def test_merged_nics_ibext_plugin_comm_info():
    res = parse_fixture("issue373")
    assert [v for *_, v in cfg(res, "ib_hca")] == ["mlx5_2:1/RoCE", "mlx5_3:1/RoCE", "mlx5_0:1/RoCE", "mlx5_1:1/RoCE"]
    want = {"net": "IBext_v8", "p2p_plugin": "IBext_v8", "env.NCCL_P2P_LEVEL": "LOC", "nnodes": "3", "local_ranks": "1",
            "mnnvl": "0", "cuda_driver": "12020", "bootstrap_if": "bond0.526:169.136.106.9<0>",
            "net_plugin_path": "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"}
    got = {k: v for _, _, k, v in cfg(res)}
    assert {k: got.get(k) for k in want} == want
    assert [v for *_, v in cfg(res, "channel_transport")] == ["NET/IBext_v8/1"] * 3
    info = log(res).filter(pl.col("kind") == "comm_info").row(0, named=True)
    assert (info["comm_id"], info["rank"], info["nranks"]) == ("0x564531f27c80", 2, 3)


def test_init_complete_comm_ids_and_timings():
    res = parse_fixture("issue1412")
    done = log(res).filter(pl.col("kind") == "init_complete")
    assert done["rank"].to_list() == [6, 4, 0, 1, 5] and set(done["nranks"].to_list()) == {16}
    assert set(done["comm_id"].to_list()) == {"0x49bbd7790311d5eb"}
    assert log(res).filter(pl.col("kind") == "init_timings")["rank"].to_list() == [2, 6, 0]
    res = parse_fixture("automodel")
    start = log(res).filter(pl.col("kind") == "init_start")
    assert start.select("rank", "nranks", "comm_id").rows()[0] == (5, 8, "0x673ba095326ff9de")
    assert ("node-0", 299591, "net_plugin", "IB") in cfg(res)


def test_old_nccl_bare_version_env_and_hosts():
    res = parse_fixture("nvpeermem")
    assert row(res, 5)["kind"] == "version" and row(res, 5)["level"] == "VERSION"
    assert res.meta["hosts"] == ["master_node", "secondary_node"]
    assert [v for *_, v in cfg(res, "net_plugin")][:1] == ["internal"]  # "No plugin found (libnccl-net.so)."
    res = parse_fixture("issue952")
    assert res.meta["hosts"] == ["<cluster_name>"] and [v for *_, v in cfg(res, "p2p_plugin")] == ["IBext"]


# --- PyTorch ProcessGroupNCCL watchdog ------------------------------------------------------------
def test_pytorch_watchdog_old_format():
    res = parse_fixture("ofa271")
    df = log(res)
    assert df["rank"].to_list() == [1, 3, 2, 6, 7]
    r = df.row(0, named=True)
    assert (r["kind"], r["level"], r["seq"], r["op_type"], r["timeout_ms"], r["ran_ms"]) == (
        "watchdog_timeout", "ERROR", 469508, "ALLREDUCE", 1800000, 1802212)
    assert (r["src_file"], r["src_line"], r["ts_quality"]) == ("ProcessGroupNCCL.cpp", 737, "none")


def test_pytorch_watchdog_new_format_pg_guid_last_completed():
    res = parse_fixture("basicsr737")  # ctx: year 2025, UTC
    first = row(res, 1)
    assert first["ts"] == dt.datetime(2025, 6, 26, 6, 24, 44, 903881, tzinfo=UTC) and first["ts_quality"] == "local"
    assert (first["rank"], first["seq"], first["timeout_ms"], first["ran_ms"]) == (1, 808, 600000, 600020)
    exc = row(res, 2)
    assert (exc["kind"], exc["seq"], exc["last_enqueued"], exc["last_completed"], exc["src_line"]) == (
        "watchdog_exception", 808, 811, 807, 1785)
    assert log(res)["rank"].to_list() == [1, 1, 0, 0, 2]


def test_pytorch_rank_prefix_beats_line_counter_and_year_from_capture():
    res = parse_fixture("llamafactory")  # ctx: capture 2025-03-21T03:00Z, Asia/Shanghai
    assert log(res)["rank"].to_list() == [0, 4, 0, 3]
    assert row(res, 1)["ts"] == dt.datetime(2025, 3, 20, 18, 7, 8, 408271, tzinfo=UTC)
    assert row(res, 3)["last_completed"] == 1579 and row(res, 3)["last_enqueued"] == 1582


def test_terminate_what_exception_raised_and_frames():
    res = parse_fixture("megatron")
    assert log(res)["kind"].to_list() == ["terminate", "watchdog_exception", "exception_raised"]
    what = row(res, 2)
    assert (what["rank"], what["seq"], what["op_type"], what["timeout_ms"], what["ran_ms"]) == (
        6, 199, "_REDUCE_SCATTER_BASE", 600000, 882722)
    assert (row(res, 3)["src_file"], row(res, 3)["src_line"]) == ("ProcessGroupNCCL.cpp", 567)
    # its C++ frames are the stack the watchdog exception was raised on: skipped and counted as its context
    from forensics.sources.nccl.unparsed import CONTEXT
    assert not reasons(res) and res.meta["skipped"] == {CONTEXT: 4}
    res = parse_fixture("sglang")
    w = log(res).filter(pl.col("kind") == "watchdog_exception").row(0, named=True)
    assert (w["rank"], w["seq"], w["op_type"]) == (5, 9141, "_ALLGATHER_BASE")


def test_wrapped_interleaved_lines_are_counted_not_guessed():
    res = parse_fixture("openr1")
    assert log(res)["kind"].to_list() == ["terminate", "terminate", "terminate", "watchdog_exception", "exception_raised"]
    # the what() line cut at 140 columns mid-word ("colle" / "ctive", "millisecond" / "s before") is joined back: its
    # SeqNum, OpType, timeout and elapsed time sit on the two lines after it (before, the row had none of them)
    w = row(res, 8)
    assert (w["rank"], w["seq"], w["op_type"], w["timeout_ms"], w["ran_ms"]) == (3, 4, "BROADCAST", 1800000, 1800011)
    from forensics.sources.nccl.wrapped import WRAPPED
    assert res.meta["skipped"][WRAPPED] == 4  # lines 9, 10 and the two frames' path tails 13, 15
    # the interleaved pieces of four ranks' "terminate called" lines are nobody's whole line: unparsed, not guessed
    assert sorted(reasons(res)) == [3, 5, 6, 7]


# --- header forms written from NCCL's own format strings (src/debug.cc) ------------------------------
def test_header_forms_of_debug_cc():
    lines = [
        # "[%d] %s:%d (%s) NCCL WARN %s" (2.24+, with function), after the WARN's leading newline
        "",
        "node7:1234:1240 [3] transport/net_ib.cc:1295 (ncclIbTest) NCCL WARN NET/IB : Got completion from peer "
        "10.1.2.3<43122> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.1.2.4",
        # "[%d] %f %s:%d NCCL TRACE %s" and "NCCL CALL %s"
        "node7:1234:1240 [3] 1200.345678 ncclProxyProgress:512 NCCL TRACE Received data",
        "node7:1234:1234 NCCL CALL ncclAllReduce(0x7f0,0x7f0,1,0,0,0x55,0x56)",
        # launcher prefixes in front of an ordinary header
        "[1,3]<stdout>:node7:1234:1240 [3] NCCL INFO Using network Socket",
        "12: node7:1234:1240 [3] NCCL INFO Using network IB",
        "caf\xe9 node7:1234:1240 [3] NCCL INFO NCCL_BUFFSIZE set by environment to 2097152.",
    ]
    res = NCCL.parse("\n".join(lines).encode("utf-8") + b"\n", ParseContext(host="h"))
    assert res.unparsed.height == 0 and res.lines == 7
    warn = row(res, 2)
    assert (warn["src_file"], warn["src_line"], warn["src_func"], warn["ib_status"], warn["vendor_err"]) == (
        "transport/net_ib.cc", 1295, "ncclIbTest", 12, 129)
    trace = row(res, 3)
    assert (trace["level"], trace["src_file"], trace["src_line"], trace["message"]) == (
        "TRACE", "ncclProxyProgress", 512, "Received data")
    call = row(res, 4)
    assert (call["level"], call["kind"], call["pid"], call["cuda_dev"]) == ("CALL", "nccl_call", 1234, None)
    assert (row(res, 5)["rank"], row(res, 6)["rank"]) == (3, 12)
    assert row(res, 7)["prefix"] == "caf\xe9" and row(res, 7)["host"] == "node7"
    assert ("node7", 1234, "env.NCCL_BUFFSIZE", "2097152") in cfg(res)


# --- bad input, chunking, sniffing -----------------------------------------------------------------
@pytest.mark.parametrize("data", [b"", b"\n\n", b"NCCL INFO", b" NCCL WARN \x00\xff\n", b"x" * (5 << 20),
                                  b"a:1:2 [99999999999] NCCL INFO x\n", b"h:1:2 [0] NCCL INFO " + b"\xc3" * 10 + b"\n"])
def test_bad_input_is_accounted(data):
    res = NCCL.parse(data, ParseContext(host="h"))
    assert res.lines == split_lines(data).height
    used = log(res).height + res.unparsed.height
    assert used <= res.lines and res.unparsed["line_no"].is_unique().all()


def test_crlf_and_lf_parse_alike():
    f = next((FIXTURES / "nccl").glob("nccl--nccl-issue1814-*.txt"))
    a = NCCL.parse(f.read_bytes(), ParseContext(host="h"))
    b = NCCL.parse(f.read_bytes().replace(b"\n", b"\r\n"), ParseContext(host="h"))
    assert log(a).drop("file").equals(log(b).drop("file"))


def test_chunked_ingest_matches_whole_parse(monkeypatch, tmp_path: Path):
    from forensics import ingest

    files = sorted((FIXTURES / "nccl").glob("nccl--*.txt"))
    data = b"".join(f.read_bytes() if f.read_bytes().endswith(b"\n") else f.read_bytes() + b"\n" for f in files)
    path = tmp_path / "big.log"
    path.write_bytes(data)
    whole = NCCL.parse(data, ParseContext(host="h", file=str(path)))
    frames: dict[str, list[pl.DataFrame]] = {}
    monkeypatch.setattr(NCCL, "CHUNK_BYTES", 4096)
    name, res = ingest.parse_path(path, "nccl", ParseContext(host="h", file=str(path)),
                                  sink=lambda t, df: frames.setdefault(t, []).append(df))
    assert name == "nccl" and res.lines == whole.lines
    assert res.unparsed.sort("line_no").equals(whole.unparsed)
    streamed = pl.concat(frames["nccl_log"]).sort("line_no")
    assert streamed.height == log(whole).height
    assert streamed.select("line_no", "host", "pid", "kind", "rank", "seq").equals(
        log(whole).sort("line_no").select("line_no", "host", "pid", "kind", "rank", "seq"))
    assert set(res.meta["hosts"]) == set(whole.meta["hosts"])


def test_sniff():
    for f in sorted((FIXTURES / "nccl").glob("nccl--*.txt")):
        assert NCCL.sniff(f.read_bytes()[:65536]), f.name
    assert not NCCL.sniff(b"[  12.345678] mlx5_core 0000:18:00.0: firmware version: 12.23.1020\n")
    assert not NCCL.sniff(b"NIC statistics:\n     rx_packets: 12\n")



def _tables(res) -> dict[str, pl.DataFrame]:
    return {**res.tables, "unparsed": res.unparsed, "meta": pl.DataFrame({"meta": [repr(sorted(res.meta.items()))]})}


@pytest.mark.parametrize("fixture", sorted((FIXTURES / "nccl").glob("nccl--*.txt")), ids=lambda f: f.name[6:46])
def test_small_and_big_input_paths_agree(monkeypatch, fixture: Path):
    """Inputs of up to LEAN_ROWS NCCL rows apply the rules gated on the whole frame, bigger ones once per distinct
    message: both give the same tables, row for row; also on the fixture three times over (every message
    repeated, as in a big log)."""
    ctx = context_for(fixture)
    data = fixture.read_bytes()
    for data in (data, (data if data.endswith(b"\n") else data + b"\n") * 3):
        monkeypatch.setattr(NCCL.patterns, "LEAN_ROWS", 1 << 30)
        small = _tables(NCCL.parse(data, ctx))
        monkeypatch.setattr(NCCL.patterns, "LEAN_ROWS", 0)
        big = _tables(NCCL.parse(data, ctx))
        for name, df in small.items():
            assert df.equals(big[name]), name


def test_sniff_states_confidence_and_what_it_saw():
    perf = (FIXTURES / "nccl" / "nccl--nccltests-issue290-srun-label-two-h100-nodes.txt").read_bytes()
    got = NCCL.sniff(perf)
    assert got and got.confidence >= 0.95 and "nccl-tests" in got.reason
    sar = (FIXTURES / "sar" / "sar--centos79-u-ALL-P-ALL.txt").read_bytes()
    assert not NCCL.sniff(sar) and NCCL.sniff(sar).confidence == 0.0
    marker_only = b"the job printed NCCL WARN somewhere\n"  # marker text, no complete NCCL line
    assert NCCL.sniff(marker_only).confidence == 0.6


def test_parse_as_nccl_a_file_that_is_not_says_so(tmp_path: Path):
    from forensics.ingest.files import parse_file

    summary, _ = parse_file(FIXTURES / "sar" / "sar--centos79-u-ALL-P-ALL.txt", source="nccl")
    assert summary["confidence"] == 0.0 and summary["warning"].startswith("does not look like nccl output")


# --- NCCL behind other runtimes' prefixes (vLLM / Ray) ---------------------------------------------
def test_ray_worker_prefixes_with_ip_and_a_cut_first_line():
    res = parse_fixture("ray-issue59778")
    assert res.unparsed.height == 0 and res.lines == 7
    rows = log(res).select("line_no", "host", "pid", "tid", "cuda_dev", "prefix", "kind").rows()
    assert rows[0] == (1, "k8s19", 2361, 2361, 0, "WorkerWrapper pid=2361)", "other")  # the paste cut the prefix
    assert rows[1] == (2, "k8s17", 581, 581, 0, "(RayWorkerWrapper pid=581, ip=10.225.128.18)", "tree")
    assert [v for *_, v in cfg(res, "env.NCCL_MIN_P2P_NCHANNELS")] == ["16"]


def test_vllm_engine_core_and_ray_worker_nested_prefixes():
    res = parse_fixture("strixhalo-issue80")
    assert res.unparsed.height == 0
    assert set(log(res)["prefix"].to_list()) == {"(EngineCore pid=21529) (RayWorkerProc pid=22126)"}
    assert log(res).select("host", "pid", "tid").unique().sort("tid").rows() == [
        ("toolbox", 22126, 22126), ("toolbox", 22126, 22237)]


def test_vllm_and_ray_lines_between_nccl_lines_go_to_runtime_log():
    res = parse_fixture("vllm-issue2442")
    assert log(res).height == 5 and set(log(res)["prefix"].to_list()) == {"(RayWorker pid=75830)"}
    assert [v for *_, v in cfg(res, "net_plugin")] == ["NCCL RDMA Plugin (v5)"]
    assert res.tables["runtime_log"].select("line_no", "program").rows() == [(2, "ray"), (3, "vllm")]
    why = reasons(res)
    assert res.lines == 10 and sorted(why) == [1, 4, 5]  # the command line and the two wrapped halves of line 3


def test_nccl_tests_pasted_into_markdown_without_hash():
    res = parse_fixture("issue583-nccltests-markdown")
    perf = res.tables["nccl_tests"]
    assert perf.group_by("kind").len().sort("kind").rows() == [("device", 8), ("params", 1)]
    assert perf.filter(pl.col("kind") == "device").select("test_rank", "pid", "test_host", "cuda_dev", "gpu").row(7) == (
        7, 1821223, "AI-A100-Beethoven01", 7, "NVIDIA A100-SXM4-40GB")
    assert reasons(res) == {1: "not an NCCL line"}  # the mpirun command; blank lines are structure


def test_mostly_pytorch_lines_around_nccl_are_accounted_and_said_so(tmp_path):
    # an RCCL/torchrun console output (Note 3 of a GitHub issue citing ROCm/rccl#1421): torchrun's and
    # c10's glog lines (-> runtime_log), Python prints, and the NCCL lines between them
    name = "nccl--rccl-torchrun-glog-interleaved-mostly-pytorch.txt"
    data = (Path(__file__).parent / "fixtures" / "nccl" / name).read_bytes()
    res = get("nccl").parse(data, ParseContext(host="h"))
    assert res.tables["nccl_log"]["line_no"].to_list() == [8, 9, 10, 12, 14]
    # torchrun's banner, c10's glog lines with the year (I20241209) and the failure record
    assert res.tables["runtime_log"]["line_no"].to_list() == [1, 2, 3, 5, 13, 16]
    reasons = dict(res.unparsed.select("line_no", "reason").iter_rows())
    assert reasons == dict.fromkeys([4, 6, 7, 15], "not an NCCL line")  # a blank line (11) is structure
    from forensics.ingest.files import unparsed_note

    note = unparsed_note(res.unparsed, res.lines, "nccl")
    assert note == "4 of 16 lines are not nccl's output as read (kept in unparsed): not an NCCL line x4"
    assert unparsed_note(res.unparsed.head(2), res.lines, "nccl") is None  # a few stray lines: no note


def test_mail_quoted_bare_version_line():
    # vLLM issue 6370 style: "> NCCL version 2.20.5+cuda12.4" among quoted NCCL INFO lines
    data = (b"> flow-matic:820398:820398 [0] NCCL INFO cudaDriverVersion 12050\n"
            b"> NCCL version 2.20.5+cuda12.4\n"
            b"> W0714 23:06:54.603780 140446678845248 torch/distributed/run.py:757] x\n")
    res = get("nccl").parse(data, ParseContext(host="h"))
    log = res.tables["nccl_log"]
    assert log.filter(pl.col("line_no") == 2)["level"].to_list() == ["VERSION"]
    assert log.filter(pl.col("line_no") == 2)["host"].to_list() == ["h"]
    assert res.unparsed.height == 0  # the quoted glog line is torchrun's record
    assert res.tables["runtime_log"].select("line_no", "program", "src_line").rows() == [(3, "pytorch", 757)]


def test_nccl_tests_output_indented_as_a_whole_is_read():
    # nccl-tests inside a Markdown list item, indented four spaces (tests/fixtures/README.md); and the bare
    # VERSION-level line indented the same way
    data = (FIXTURES / "nccl" / "nccl--h100-nccltests-readme-indented-list-block.txt").read_bytes()
    res = NCCL.parse(data, ParseContext(host="h"))
    assert res.unparsed.height == 0
    t = res.tables["nccl_tests"]
    rows = t.filter(pl.col("kind") == "result").sort("line_no")
    assert rows.select("size_b", "root", "oop_busbw_gbs", "ip_wrong").rows()[0] == (268435456, -1, 419.49, 0)
    assert t.filter(pl.col("kind") == "device").height == 8
    assert t["avg_busbw_gbs"].drop_nulls().to_list() == [448.212]
    bare = NCCL.parse(b"    NCCL version 2.20.5+cuda12.4\n", ParseContext(host="h"))
    assert bare.unparsed.height == 0 and bare.tables["nccl_log"]["message"].to_list() == ["NCCL version 2.20.5+cuda12.4"]


def test_nccl_tests_failure_reports_are_rows_not_unparsed():
    """nccl-tests issue 322: each rank's 'HOST: Test NCCL failure common.cu:1204 ...' and the ' .. HOST pid P: Test
    failure common.cu:915' chain are nccl_tests failure rows (host and pid as printed); mpirun's footer stays unparsed."""
    from forensics.sources import detect
    from test_sources_conformance import check_accounting

    f = next((FIXTURES / "nccl").glob("nccl--tests-issue322-*.txt"))
    data = f.read_bytes()
    assert detect(data) == "nccl"
    res = NCCL.parse(data, context_for(f))
    check_accounting(res, data, f.name)
    t = res.tables["nccl_tests"]
    assert t["kind"].unique().to_list() == ["failure"] and t.height == 12
    assert t.filter(pl.col("line_no") == 3).select("test_host", "pid", "detail").row(0) == (
        "HCA-14", 1015577, "Test failure common.cu:915")
    assert t.filter(pl.col("line_no") == 2).select("test_host", "pid", "detail").row(0) == (
        "HCA-14", None, "Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '")
    assert sorted(reasons(res)) == [13, 14, 15, 17, 18, 19] and len(log(res)) == 0  # 16 is blank


def test_nccl_tests_failure_without_host_and_old_chain():
    """'Test CUDA failure common.cu:730 ...' (nccl-tests issue 66, no host) and the older ' .. gpu5: Test failure'."""
    data = (b"Test CUDA failure common.cu:730 'unknown error'\n"
            b" .. gpu5: Test failure common.cu:393\n"
            b"Tested the failure common case\n")
    res = NCCL.parse(data, ParseContext(host="h"))
    t = res.tables["nccl_tests"]
    assert t.select("line_no", "test_host", "pid", "detail").rows() == [
        (1, None, None, "Test CUDA failure common.cu:730 'unknown error'"), (2, "gpu5", None, "Test failure common.cu:393")]
    assert list(reasons(res)) == [3]


def test_nccl_tests_old_all_gather_rows_without_redop():
    """nccl-tests issue 37 (all_gather_perf of nccl-tests 2.0, NCCL 2.4/2.5): no redop and no root column, a max
    `error` per half, the '#' of the header eaten by Markdown; the header is structure, the result row is typed
    half by half, 'Out of bounds values : 2 FAILED' and the average are rows; only the command line is unparsed."""
    from forensics.sources import detect
    from test_sources_conformance import check_accounting

    f = FIXTURES / "nccl" / "nccl--nccltests37-all-gather-old-no-redop-oob-failed.txt"
    data = f.read_bytes()
    assert detect(data) == "nccl"
    res = NCCL.parse(data, context_for(f))
    check_accounting(res, data, f.name)
    t = res.tables["nccl_tests"]
    assert t.select("line_no", "kind").rows() == [(5, "result"), (6, "out_of_bounds"), (7, "avg_busbw")]
    r = t.row(0, named=True)
    assert (r["size_b"], r["count"], r["dtype"], r["redop"], r["root"]) == (4294967296, 134217728, "float", None, None)
    assert (r["oop_time_us"], r["oop_algbw_gbs"], r["oop_busbw_gbs"], r["oop_error"], r["oop_wrong"]) == \
        (29122.0, 129.05, 129.05, 1.0, None)
    assert (r["ip_time_us"], r["ip_busbw_gbs"], r["ip_error"]) == (29169.0, 128.84, 1.0)
    assert t.row(1, named=True)["wrong_total"] == 2 and t.row(2, named=True)["avg_busbw_gbs"] == 128.942
    assert list(reasons(res)) == [1]


def test_nccl_tests_rows_with_redop_keep_their_columns():
    """The number of words tells the layouts apart: 13 (root, #wrong), 12 (redop, error), 11 (neither)."""
    data = (b"     1048576        262144     float     sum      -1    28.15   37.25   65.19      0    27.52   38.10   66.67      0\n"
            b"       65536         16384   float     sum    23.07    2.84    2.84  0e+00    18.39    3.56    3.56  0e+00\n"
            b"       65536         16384   float    23.07    2.84    2.84  0e+00    18.39    3.56    3.56  0e+00\n")
    t = NCCL.parse(data, ParseContext(host="h")).tables["nccl_tests"]
    assert t.select("redop", "root", "oop_time_us", "oop_busbw_gbs", "oop_wrong", "oop_error", "ip_busbw_gbs").rows() == [
        ("sum", -1, 28.15, 65.19, 0, None, 66.67), ("sum", None, 23.07, 2.84, None, 0.0, 3.56),
        (None, None, 23.07, 2.84, None, 0.0, 3.56)]


def test_ray_dedup_marks_on_nccl_lines_and_colour_codes_as_pasted():
    # a vLLM/Ray run's stdout (deepseek-v2.5 on 2 nodes): Ray's "[repeated 14x across cluster]" on NCCL lines
    name = "vllm-ray-dedup-repeated-across-cluster-deepseek"
    res = parse_fixture(name)
    c = res.tables["nccl_config"]
    val = {(r["line_no"], r["key"]): r["value"] for r in c.iter_rows(named=True)}
    assert (val[(7, "cuda_driver")], val[(19, "channel_transport")], val[(20, "cpu_affinity")]) == (
        "12080", "P2P/IPC/read", "ffffff")  # before: "12080 [repeated 14x across cluster]"
    assert not any("repeated" in v for v in c["value"].to_list() if v)
    assert res.meta["ray_deduplicated"] == 19 and log(res).height == 22
    rt = res.tables["runtime_log"]
    assert rt.select("line_no", "worker", "pid", "repeated").rows() == [
        (1, "RayWorkerWrapper", 631, 14), (2, "RayWorkerWrapper", 631, 14), (25, "RayWorkerWrapper", 663, None)]
    # the VERSION line behind a worker prefix (NCCL prints no host there) is read; its prefix is not kept
    assert res.unparsed.height == 0 and val[(24, "version")] == "2.21.5+cuda12.4"
    assert log(res).filter(pl.col("line_no") == 24).select("prefix", "level").rows() == [(None, "VERSION")]
    # the same lines with Ray's cyan worker prefix as pastes carry it: the escape byte, written out (cat -v, a
    # logger's repr, an echo -e string), replaced by U+FFFD (a web page) or lost
    data = next((FIXTURES / "nccl").glob(f"nccl--{name}.txt")).read_bytes()
    for esc in ("\x1b", "^[", "\\x1b", "\\033", "\\u001b", "\ufffd", ""):
        coloured = b"".join(
            (esc + "[36m").encode() + ln[:ln.index(b")") + 1] + (esc + "[0m").encode() + ln[ln.index(b")") + 1:]
            for ln in data.splitlines(keepends=True))
        r = NCCL.parse(coloured, context_for(next((FIXTURES / "nccl").glob(f"nccl--{name}.txt"))))
        assert r.meta["colour_codes"] == 25, esc
        assert log(r).drop("file").equals(log(res).drop("file")), esc
        assert r.tables["runtime_log"].drop("file").equals(rt.drop("file")), esc
        assert r.tables["nccl_config"].drop("file").equals(c.drop("file")), esc
        assert r.unparsed.height == 0, esc
    # an NCCL "[0m"-free line is left alone: "[0]" is a CUDA device, not a colour code
    assert log(res).filter(pl.col("line_no") == 22)["cuda_dev"].to_list() == [4]


# --- Ray worker output as pasted: cut by interleaving, colour codes written out, the dedup mark wrapped ----
RAY_CUT = "ray59778-rayworkerwrapper-ip-cut-mid-prefix"


def test_ray_worker_lines_cut_by_interleaving_real_paste():
    # ray-project/ray#59778: a paste whose first line lost its prefix's start ("WorkerWrapper pid=2361) k8s19:..."),
    # an elision "[。。。" and a last line cut mid-prefix: what is NCCL is read, the two fragments are unparsed
    res = parse_fixture(RAY_CUT)
    assert log(res).height == 7 and res.lines == 9
    assert row(res, 1)["host"] == "k8s19" and row(res, 2)["host"] == "k8s17"
    assert reasons(res) == {8: "not an NCCL line", 9: "not an NCCL line"}
    assert ("k8s17", 581, "env.NCCL_NCHANNELS_PER_PEER", "16") in cfg(res)


def _ray_cut_variant() -> bytes:
    # the real paste above in the forms vLLM/Ray pastes take (vllm-project/vllm#5537 shows the prefix as
    # "ESC[36m(RayWorkerWrapper pid=14390)ESC[0m"): colour codes written out, line 3 cut after "k8s" by another
    # worker's output (its rest, "17:581:581 [0] NCCL INFO ...", on the next line), Ray's dedup mark cut at its
    # blank, a vLLM record behind the prefix
    real = [ln for ln in (FIXTURES / "nccl").glob(f"nccl--{RAY_CUT}*.txt")][0].read_text().splitlines()
    pre = "(RayWorkerWrapper pid=581, ip=10.225.128.18)"
    col = [ln.replace(pre, f"ESC[36m{pre}ESC[0m") for ln in real[1:7]]
    head, tail = col[1].split(" k8s17", 1)
    return "\n".join([
        f"ESC[36m{pre}ESC[0m INFO 12-30 10:02:11 pynccl.py:69] vLLM is using nccl==2.21.5",
        col[0],                                   # 2: Trees
        head + " k8s",                            # 3: cut mid-host
        "17" + tail,                              # 4: the rest of it
        col[2] + " [repeated 4x across",          # 5: the mark cut at its blank
        "cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication)",
        col[3], col[4], col[5],
        head + " k8",                             # 10: cut mid-host, its rest no host of the file
        "s99:581:581 [0] NCCL INFO Using network IB",
    ]).encode() + b"\n"


def test_ray_prefix_with_written_out_colour_cut_hosts_and_wrapped_dedup_mark():
    res = NCCL.parse(_ray_cut_variant(), ParseContext(host="n1", file="ray.log"))
    assert res.meta["colour_codes"] == 8  # lines with one
    # a vLLM record behind the written-out colour codes is read (was unparsed: "ESC" left before the prefix)
    assert res.tables["runtime_log"].get_column("line_no").to_list() == [1]
    # line 4's host was cut by another worker's line: read whole from line 3's "k8s" (was host "17")
    assert row(res, 4)["host"] == "k8s17" and res.meta["cut_hosts_joined"] == 1
    # the wrapped dedup mark: off the NCCL line, its tail counted (was "cluster]" unparsed and the mark in the value)
    assert ("k8s17", 581, "env.NCCL_MIN_P2P_NCHANNELS", "16") in cfg(res)
    assert res.meta["ray_deduplicated"] == 1 and sum(res.meta["skipped"].values()) == 1
    # where the two pieces make no host of the file, the row is not trusted: unparsed, with the reason
    from forensics.sources.nccl.parser import CUT_HOST
    assert reasons(res) == {3: "not an NCCL line", 10: "not an NCCL line", 11: CUT_HOST}
    assert set(log(res).get_column("host")) == {"k8s17"} and res.lines == 11


def test_a_whole_line_after_a_cut_one_keeps_its_host_and_a_wrapped_ray_note_is_counted():
    # the real paste's lines again: a line cut mid-host followed by a whole line of another worker (its own
    # prefix: not a continuation, its host kept), and Ray's dedup mark with its note wrapped inside the URL
    real = [ln for ln in (FIXTURES / "nccl").glob(f"nccl--{RAY_CUT}*.txt")][0].read_text().splitlines()
    pre = "(RayWorkerWrapper pid=581, ip=10.225.128.18)"
    text = "\n".join([
        real[2].split(" k8s17", 1)[0] + " k8s1",  # 1: cut
        real[3],                                   # 2: whole, with its prefix
        real[4] + " [repeated 4x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to "
                  "disable log deduplication, or see https://do",
        "cs.ray.io/en/master/ray-observability/ray-logging.html#log-deduplication for more options.)",
    ]).encode() + b"\n"
    assert text.count(pre.encode()) == 3
    res = NCCL.parse(text, ParseContext(host="n1", file="ray.log"))
    assert log(res).get_column("host").to_list() == ["k8s17", "k8s17"] and "cut_hosts_joined" not in res.meta
    assert reasons(res) == {1: "not an NCCL line"}
    assert row(res, 3)["message"] == "NCCL_NCHANNELS_PER_PEER set by environment to 16."
    assert res.meta["ray_deduplicated"] == 1 and sum(res.meta["skipped"].values()) == 1


def test_shell_session_lines_around_nccl_are_unparsed_with_what_they_are():
    # real: a conda environment before a bracketed prompt, the program's own output, then NCCL lines (deit #28)
    res = parse_fixture("deit-issue28-conda-bracket-prompt")
    assert log(res).height == 4 and res.lines == 10
    why = dict(zip(res.unparsed["line_no"].to_list(), res.unparsed["reason"].to_list()))
    assert why[1] == "shell prompt or command line (not an NCCL line)"
    assert set(why) == {1, 2, 3, 4, 5, 6}  # the program's output is no NCCL line: unparsed, never a row
    # real: a traceback between two ranks' NCCL WARN chains (pytorch #40273): all NCCL lines read, the traceback's
    # four lines (its source line too) skipped and counted as the context of the error raised
    tb = parse_fixture("pytorch-issue40273-traceback-interleaved")
    assert log(tb).height == 15
    from forensics.sources.nccl.unparsed import CONTEXT
    assert tb.unparsed.height == 0 and tb.meta["skipped"] == {CONTEXT: 4}  # the stack the error was raised on
    # Open MPI's help message (its text between the rules, the aggregation note) and Slurm's lines, a venv prompt,
    # and an exception line: each says what it is
    data = (b"(.venv) user@n1:~/nccl-tests$ srun -N 2 ./build/all_reduce_perf -b 8 -e 8\n"
            b"srun: job 1234 queued and waiting for resources\n"
            b"--------------------------------------------------------------------------\n"
            b"By default, for Open MPI 4.0 and later, infiniband ports on a device\n"
            b"  Local host:              n1\n"
            b"--------------------------------------------------------------------------\n"
            b"[n1:106838] 11 more processes have sent help message help-mpi-btl-openib.txt / ib port not selected\n"
            b"n1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
            b"torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error\n"
            b"slurmstepd: error: *** STEP 1234.0 ON n1 CANCELLED AT 2024-01-01T00:00:00 ***\n"
            b"just some words\n")
    res = NCCL.parse(data, ParseContext(host="h", file="f"))
    why = dict(zip(res.unparsed["line_no"].to_list(), res.unparsed["reason"].to_list()))
    mpi = "MPI launcher banner or message (Open MPI, MPICH, PRRTE; not an NCCL line)"
    assert why[1] == "shell prompt or command line (not an NCCL line)"
    assert why[2] == why[10] == "Slurm message (srun, slurmstepd, salloc; not an NCCL line)"
    assert why[3] == why[4] == why[5] == why[6] == why[7] == mpi
    assert why[11] == "not an NCCL line" and 8 not in why
    assert res.lines == split_lines(data).height and log(res).height + len(why) >= 10


def test_nccltests_tables_side_by_side_and_markdown_table_cells():
    # DERIVED: the aws 2xA10G all_reduce_perf table in two halves side by side, joined by " | " (headers too)
    res = parse_fixture("DERIVED-two-halves-side-by-side-pipe")
    t = res.tables["nccl_tests"]
    assert res.unparsed.height == 0
    want = parse_fixture("aws-2xa10g-nccl2.11.4").tables["nccl_tests"].filter(pl.col("kind") == "result")
    got = t.filter(pl.col("kind") == "result")
    assert sorted(got.select("size_b", "oop_busbw_gbs", "ip_time_us").rows()) == sorted(
        want.select("size_b", "oop_busbw_gbs", "ip_time_us").rows())
    assert got.filter(pl.col("line_no") == 4)["size_b"].to_list() == [8, 65536]  # both halves of one line
    # a Markdown table: a header row, its rule, a row of one field per cell; a line of other cells stays unparsed
    md = ("| size | count | type | redop | root | time | algbw | busbw | #wrong | time | algbw | busbw | #wrong |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
          "| 128 | 4 | float | sum | -1 | 32.31 | 0.00 | 0.00 | 0 | 25.35 | 0.01 | 0.00 | 0 |\n"
          "| float | sum | is what we ran |\n")
    res = NCCL.parse(md.encode(), ParseContext(host="h", file="t"))
    assert res.tables["nccl_tests"].select("line_no", "size_b", "ip_time_us").rows() == [(3, 128, 25.35)]
    assert res.unparsed["line_no"].to_list() == [4]


# --- watchdog reports as launchers, runners and people pass them on ------------------------------------
def test_runner_stderr_prefix_and_its_width_wrap_give_whole_watchdog_rows():
    # real: milabench PR #269, a job runner's "<job> [stderr] " before every line, wrapped at its console's width
    # (some breaks keep the blank, "detected" / "by watchdog" does not): every watchdog row gets its fields
    from forensics.sources.nccl.wrapped import WRAPPED

    res = parse_fixture("milabench-pr269-runner-stderr-prefix-wrapped-watchdog")
    got = log(res).select("line_no", "rank", "kind", "seq", "op_type", "timeout_ms", "ran_ms", "last_enqueued",
                          "last_completed").rows()
    assert got == [(1, 7, "watchdog_exception", 2070, None, None, None, 2082, 2069),
                   (3, 13, "watchdog_timeout", 2070, "REDUCE", 600000, 600068, None, None),
                   (5, 8, "watchdog_timeout", 2070, "REDUCE", 600000, 600067, None, None),
                   (7, 13, "watchdog_exception", 2070, None, None, None, 2070, 2069),
                   (9, 8, "watchdog_exception", 2070, None, None, None, 2070, 2069)]
    assert res.unparsed.height == 0 and res.meta["skipped"] == {WRAPPED: 5}
    assert "detected by watchdog" in row(res, 7)["message"]  # the width's word wrap dropped that blank
    # its C++ frames behind the same prefix, each frame's library path wrapped onto the next line: joined, and the
    # frames counted as the stack the error was raised on; the prefix alone on a line is structure
    from forensics.sources.nccl.unparsed import CONTEXT

    res = parse_fixture("milabench-pr269-runner-stderr-frames-wrapped")
    assert log(res).select("line_no", "rank", "seq", "last_enqueued", "last_completed").rows() == [(10, 3, 2070, 2082, 2069)]
    assert res.meta["skipped"] == {WRAPPED: 3, CONTEXT: 5}
    assert res.unparsed["line_no"].to_list() == [1]  # the tail of a frame whose head the excerpt cut off


def test_watchdog_message_wrapped_by_hand_with_or_without_its_glog_header():
    # real: a blog's "lightly trimmed" torchrun log, each record broken after "timeout:" and before "ran for"
    res = parse_fixture("blog-hung-job-hand-wrapped-glog-watchdog-three-ranks")
    assert log(res).select("line_no", "rank", "seq", "op_type", "timeout_ms", "ran_ms").rows() == [
        (1, 1, 4001, "ALLREDUCE", 600000, 600089), (4, 6, 4001, "ALLREDUCE", 600000, 600091),
        (7, 0, 4001, "ALLREDUCE", None, 600088)]
    assert res.unparsed.height == 0
    # real: notes quoting the message alone ("[Rank 2] Watchdog caught ...", no glog header), wrapped at ~70 columns
    res = parse_fixture("ddp-notes-hand-wrapped-watchdog-no-header")
    assert log(res).select("rank", "kind", "seq", "op_type", "timeout_ms", "ran_ms").rows() == [
        (2, "watchdog_timeout", 18990, "ALLREDUCE", 600000, 600011)]
    assert res.unparsed.height == 0
    # indented by hand: the pieces of the watchdog's message join; a report's own indented lines do not
    data = (b"[Rank 5] Watchdog caught collective operation timeout:\n"
            b"  WorkNCCL(SeqNum=10707, OpType=COALESCED, ..., Timeout(ms)=600000)\n"
            b"  ran for 600030 milliseconds before timing out.\n")
    r = log(NCCL.parse(data, ParseContext())).row(0, named=True)
    assert (r["seq"], r["op_type"], r["timeout_ms"], r["ran_ms"]) == (10707, "COALESCED", 600000, 600030)
    desync = parse_fixture("pytorch-issue152623-desync-report-rank7-didnt-join")
    assert desync.tables["nccl_desync"].height == 10


def test_torchrun_rank_prefixed_traceback_is_the_errors_context():
    # real: vllm #10453, NCCL's error chain then torchrun's "[rank1]: " traceback ending in DistBackendError
    from forensics.sources.nccl.unparsed import CONTEXT

    res = parse_fixture("vllm-issue10453-torchrun-rank-prefix-traceback")
    err = log(res).filter(pl.col("kind") == "nccl_error").row(0, named=True)
    assert (err["line_no"], err["rank"]) == (18, 1)  # the rank from torchrun's prefix (was null)
    assert res.meta["skipped"] == {CONTEXT: 9}  # Traceback, File, source and caret lines
    # what NCCL's error said after the exception line stays in view
    assert res.unparsed["line_no"].to_list() == [19, 20]


def test_a_bad_byte_before_the_header_of_a_prefixed_line_is_no_crash():
    # found by tests/test_sources_properties.py (mutated fixtures) in the fresh-clone CI: a Ray worker's prefix
    # with invalid UTF-8 in it (decoded to U+FFFD, three bytes for one character) made the slow header path
    # slice bytes at a character offset ("invalid utf8": the file was lost)
    from forensics.sources import parse_bytes

    data = (b"(EngineCore pid=21529) (RayWorkerProc pid=22126) toolbox:22126:22126 [0] NCCL INFO Connected to proxy\n"
            b"(EngineCore pid=21529) (RayWorkerProc pid=22\x80\x80\x80126) toolbox:22126:22237 [0] NCCL INFO NET/IB: ncclIbConnect isP2p=0\n"
            b"(EngineCore pid=21529) (RayWorkerProc pid=22126) toolbox:22126:22237 [0] NCCL INFO NET/IB: ncclIbConnect Max Nqps=1\n")
    _, r = parse_bytes(data, "nccl")
    log = r.tables["nccl_log"]
    assert (log.height, r.unparsed.height, r.lines) == (3, 0, 3)
    assert log.get_column("message").to_list()[1] == "NET/IB: ncclIbConnect isP2p=0"
    assert log.get_column("host").to_list() == ["toolbox"] * 3
