"""nvlink source: the error counter lines split in polars keep the line walk's reading. Each takes
the snapshot and GPU of the last marker or GPU line before it. A counter line before any GPU line,
a value above 2^63-1 and an `nvlink -gt` traffic line go to unparsed with their reasons, and a GPU
index seen again without markers starts the next snapshot."""
from __future__ import annotations

from forensics.sources import ParseContext, registry

PARSER = registry()["nvlink"]
GPU0 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaa)"
GPU1 = "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbb)"


def _parse(lines: list[str]):
    return PARSER.parse(("\n".join(lines) + "\n").encode(), ParseContext(host="n1"))


def test_counters_take_the_gpu_and_snapshot_before_them():
    res = _parse(["\t Link 0: Replay Errors: 5", GPU0, "\t Link 0: Replay Errors: 0", "\t Link 0: CRC Flit Errors: 000012",
                  "\t Link 1: Data Tx: 12 KiB", "\t Link 3: 26.562 GB/s", GPU1, "\t Link 0: Recovery Errors: 1",
                  GPU0, "\t Link 0: Replay Errors: 7", "   Link 11: CRC-Data/x Errors: 2   "])
    errors = res.tables["nvlink_errors"].select("line_no", "sample_no", "gpu", "gpu_uuid", "link", "counter", "value")
    assert errors.rows() == [
        (3, 0, 0, "GPU-aaa", 0, "replay_errors", 0),
        (4, 0, 0, "GPU-aaa", 0, "crc_flit_errors", 12),
        (8, 0, 1, "GPU-bbb", 0, "recovery_errors", 1),
        (10, 1, 0, "GPU-aaa", 0, "replay_errors", 7),  # GPU 0 again without markers: the next snapshot
        (11, 1, 0, "GPU-aaa", 11, "crc_data_x_errors", 2),
    ]
    assert res.tables["nvlink_links"].select("line_no", "gpu", "link", "speed_gbps").rows() == [(6, 0, 3, 26.562)]
    assert res.unparsed.select("line_no", "reason").rows() == [
        (1, "link line before any GPU line"),
        (5, "nvlink -gt traffic counter (read by the nvidia_smi source)"),
    ]
    assert res.meta["variant"] == "status+errors"


def test_values_past_int64_and_lines_before_the_first_marker():
    marker = '#### forensics-sample ts=2026-12-01T10:00:0{}.000000+00:00 argv="nvidia-smi nvlink -e"'
    res = _parse(["\t Link 0: Replay Errors: 5", marker.format(1), "\t Link 9: Replay Errors: 4", GPU0,
                  "\t Link 1: Recovery Errors: 9223372036854775807", "\t Link 1: Recovery Errors: 9223372036854775808",
                  "\t Link 1: Recovery Errors: 99999999999999999999", marker.format(2), GPU0, "\t Link 2: CRC Errors: 3"])
    errors = res.tables["nvlink_errors"]
    assert errors.select("line_no", "sample_no", "link", "value").rows() == [
        (5, 0, 1, 9223372036854775807), (10, 1, 2, 3)]
    assert [t.isoformat() for t in errors["ts"]] == ["2026-12-01T10:00:01+00:00", "2026-12-01T10:00:02+00:00"]
    assert errors["ts_quality"].to_list() == ["sampled", "sampled"]
    assert res.unparsed.select("line_no", "reason").rows() == [
        (1, "line before the first forensics-sample marker"),
        (3, "link line before any GPU line"),  # a marker forgets the GPU of the snapshot before it
        (6, "counter value above 2^63-1"),
        (7, "counter value above 2^63-1"),
    ]
