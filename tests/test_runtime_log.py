"""Records of the programs around NCCL in a job's output (vLLM, Ray, torchrun/torchelastic, PyTorch's glog
and Python logging) -> runtime_log, read from real pastes (tests/fixtures/nccl/ and train_log/, provenance in
tests/fixtures/README.md)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from forensics.sources import ParseContext, get
from forensics.sources import _runtime_log as runtime_log

FIX = Path(__file__).parent / "fixtures"
UTC = dt.timezone.utc


def _parse(name: str, **ctx) -> tuple[pl.DataFrame, list[int]]:
    source = name.split("--", 1)[0]
    res = get(source).parse((FIX / source / name).read_bytes(), ParseContext(host="h", tz="UTC", **ctx))
    return res.tables["runtime_log"], res.unparsed["line_no"].to_list()


def test_vllm_worker_process_prefix_and_year_from_context():
    rows, unparsed = _parse("train_log--vllm-issue5637-vllmworkerprocess-prefix-found-nccl.txt", year=2024)
    assert unparsed == [] and rows.height == 14
    first = rows.row(0, named=True)
    assert (first["program"], first["worker"], first["pid"], first["level"], first["src_file"], first["src_line"],
            first["message"]) == ("vllm", "VllmWorkerProcess", 3681351, "INFO", "multiproc_worker_utils.py", 215,
                                  "Worker ready; awaiting tasks")
    assert first["ts"] == dt.datetime(2024, 6, 20, 1, 29, 17, tzinfo=UTC)
    assert first["ts_quality"] == runtime_log.YEAR_INFERRED
    # the engine's own lines have no worker prefix
    assert rows.filter(pl.col("line_no") == 3).select("worker", "pid").row(0) == (None, None)


def test_year_missing_leaves_time_null_not_guessed():
    rows, _ = _parse("train_log--vllm-issue5637-vllmworkerprocess-prefix-found-nccl.txt")
    assert rows["ts"].null_count() == rows.height and set(rows["ts_quality"]) == {"none"}


def test_year_from_capture_time_rolls_back_for_later_months():
    rows, _ = _parse("train_log--vllm-issue5637-vllmworkerprocess-prefix-found-nccl.txt",
                     capture_time=dt.datetime(2025, 1, 3, tzinfo=UTC))
    assert rows["ts"][0] == dt.datetime(2024, 6, 20, 1, 29, 17, tzinfo=UTC)


def test_ray_worker_prefix_ip_and_dedup_count():
    lines = pl.DataFrame({"line_no": [1, 2], "text": [
        "(RayWorkerWrapper pid=983) INFO 01-29 05:10:17 selector.py:120] Using Flash Attention backend. "
        "[repeated 14x across cluster] (Ray deduplicates logs by default.)",
        "2024-01-17 06:16:16,954 INFO worker.py:1673 -- Started a local Ray instance."]})
    rows, rest = runtime_log.read(lines, ParseContext(year=2025, tz="UTC"))
    assert rest.height == 0
    assert rows.select("program", "worker", "pid", "repeated").rows() == [("vllm", "RayWorkerWrapper", 983, 14),
                                                                         ("ray", None, None, None)]
    assert rows["ts"][1] == dt.datetime(2024, 1, 17, 6, 16, 16, 954000, tzinfo=UTC)
    assert rows.select("src_file", "src_line", "ts_quality").row(1) == ("worker.py", 1673, "local")


def test_ray_driver_and_vllm_lines_of_a_real_run():
    rows, unparsed = _parse("nccl--vllm-issue2442-rayworker-prefix-vllm-lines-wrapped.txt", year=2024)
    assert rows.select("line_no", "program", "level", "src_file").rows() == [
        (2, "ray", "INFO", "worker.py"), (3, "vllm", "INFO", "llm_engine.py")]
    assert 1 in unparsed  # the command line stays unparsed


def test_glog_lines_torchrun_failure_and_exit_code_message():
    rows, _ = _parse("nccl--rccl-torchrun-glog-interleaved-mostly-pytorch.txt")
    failed = rows.filter(pl.col("message").str.starts_with("failed (exitcode: 1)")).row(0, named=True)
    assert (failed["program"], failed["level"], failed["tid"], failed["src_line"]) == ("pytorch", "ERROR", 19400, 869)
    assert failed["src_file"] == "site-packages/torch/distributed/elastic/multiprocessing/api.py"
    # a glog date with its year (I20241209) is a full local time
    full = rows.filter(pl.col("src_line") == 905).row(0, named=True)
    assert full["ts"] == dt.datetime(2024, 12, 9, 23, 39, 42, 495619, tzinfo=UTC) and full["ts_quality"] == "local"
    assert rows["line_no"].is_sorted()


def test_python_default_logging_levels_and_loggers():
    rows, unparsed = _parse("train_log--codellama-issue123-python-logging-torchrun-elastic-failed.txt")
    assert rows.select("line_no", "program", "level", "logger").rows() == [
        (6, "pytorch", "WARNING", "torch.distributed.elastic.multiprocessing.api"),
        (7, "pytorch", "ERROR", "torch.distributed.elastic.multiprocessing.api")]
    assert rows["message"][1].startswith("failed (exitcode: 1) local_rank: 1 (pid: 10622)")
    assert unparsed == [1, 2, 3, 4, 8]  # the CUDA error text and the traceback are no records


def test_torchelastic_bracket_level_records_and_config_lines_left():
    rows, unparsed = _parse("train_log--kubeflow-trainer-issue1504-torchelastic-bracket-level-module.txt")
    assert rows.height == 8 and set(rows["program"]) == {"torchelastic"}
    assert rows.select("logger", "level").row(4) == ("c10d_rendezvous_backend", "INFO")
    assert rows["ts"][0] == dt.datetime(2021, 12, 8, 12, 28, 26, 50000, tzinfo=UTC)
    assert unparsed == list(range(5, 17))  # the launch config's continuation lines are not records


def test_torch_logging_bracket_time_name_level():
    rows, _ = _parse("train_log--pytorch-issue121209-torch-logging-bracket-time-name-level.txt")
    assert rows.height == 4
    assert rows.select("program", "logger", "level").unique().rows() == [("pytorch", "torch.distributed.run", "WARNING")]
    assert rows["message"][0] == "" and rows["message"][2].startswith("Setting OMP_NUM_THREADS")


def test_launcher_rank_and_mail_quote_prefixes():
    lines = pl.DataFrame({"line_no": [1, 2, 3], "text": [
        "> W0714 23:06:54.603780 140446678845248 torch/distributed/run.py:757] *****",
        "[1,3]<stderr>:INFO 01-29 05:10:25 pynccl.py:69] vLLM is using nccl==2.21.5",
        "[rank2]:[W316 16:26:53.533610946 Module.cpp:12] something"]})
    rows, _ = runtime_log.read(lines, ParseContext(tz="UTC"))
    assert rows.select("program", "rank", "tid", "src_line").rows() == [("pytorch", None, 140446678845248, 757),
                                                                       ("vllm", 3, None, 69), ("pytorch", 2, None, 12)]


def test_lines_that_only_look_alike_stay_out():
    lines = pl.DataFrame({"line_no": [1, 2, 3, 4], "text": [
        "INFO: something without a logger name", "training...", "(deit92) [user@host deit]$ bash train.sh",
        "WARNING: Logging before InitGoogleLogging() is written to STDERR"]})
    rows, rest = runtime_log.read(lines, ParseContext())
    assert rows.height == 0 and rest.height == 4


def test_etcd_rendezvous_records_between_glog_agent_lines_and_nccl():
    rows, unparsed = _parse("nccl--llama-recipes-k8s-etcd-rendezvous-glog-agent-then-nccl-2.21.5.txt", year=2024)
    etcd = rows.filter(pl.col("program") == "torchelastic")
    assert etcd.height == 9 and etcd["level"].unique().to_list() == ["INFO"]
    joined = etcd.filter(pl.col("message").str.starts_with("Joined rendezvous version 1 as rank 0")).row(0, named=True)
    assert joined["ts"] == dt.datetime(2024, 12, 10, 18, 28, 0, 591000, tzinfo=UTC) and joined["ts_quality"] == "local"
    glog = rows.filter(pl.col("program") == "pytorch")
    assert glog.height == 23 and set(glog["tid"]) == {1}  # the agent's glog lines, config lines included
    assert glog.filter(pl.col("src_line") == 525)["message"].to_list()[1] == "  restart_count=0"
    assert unparsed == [33, 34, 35, 36]  # a Python warning, its source line and the script's prints


def test_torchelastic_02_agent_and_etcd_records_of_a_restart():
    rows, unparsed = _parse("train_log--azure-spot-eviction-torchelastic-0.2-etcd-rendezvous-restart.txt")
    assert rows.select("program", "level", "logger").row(0) == ("torchelastic", "ERROR", "local_elastic_agent")
    assert rows.filter(pl.col("logger") == "api").height == 5
    assert rows.filter(pl.col("logger").is_null()).height == 14  # the etcd rendezvous records
    assert set(rows["program"]) == {"torchelastic"}
    # the traceback and the "Result:" block are no records
    assert unparsed == [2, 3, 4, 5, 6, 7] + list(range(28, 36))
