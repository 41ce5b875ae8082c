"""Flight Recorder dumps (issue 19): real dumps of torch 2.13.0+cpu with a gloo process group (3 ranks,
the last never enters the fifth collective; see tests/fixtures/README.md), read from the pickle
without running it and from the JSON form; and pickles crafted to run code, refused with nothing run."""
from __future__ import annotations

import doctest
import json
import os
import pickle
import subprocess
from pathlib import Path

import polars as pl
import pytest

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.sources import ParseContext, detect, get
from forensics.sources import _safe_pickle
from table_bundles import write_tables

DIR = Path(__file__).parent / "fixtures" / "flight_recorder"
PICKLES = sorted((DIR / "pickle").iterdir())
FR = get("flight_recorder")
KEY = ["rank", "pg_name", "pg_desc", "collective_seq_id", "op_type", "state", "ts", "timeout_ms", "input_sizes"]


def _parse(data: bytes, name: str, host: str = "node01"):
    return FR.parse(data, ParseContext(host=host, file=name))


def test_real_pickles_read_like_their_json_form():
    assert [p.name for p in PICKLES] == ["fr_trace_rank_0", "fr_trace_rank_1", "fr_trace_rank_2"]
    for p in PICKLES:
        assert detect(p.read_bytes()[:65536]) == "flight_recorder"
        res = _parse(p.read_bytes(), p.name)
        assert res.unparsed.height == 0 and "warning" not in res.meta
        rank = int(p.name[-1])
        assert res.tables["flight_recorder"]["rank"].unique().to_list() == [rank]
        js = DIR / f"flight_recorder--torch2.13-gloo-3ranks-{'behind-' if rank == 2 else ''}rank{rank}.json"
        if js.is_file():
            other = _parse(js.read_bytes(), js.name)
            assert res.tables["flight_recorder"].select(KEY).equals(other.tables["flight_recorder"].select(KEY))
            assert res.tables["flight_recorder_pg"].drop("file").equals(other.tables["flight_recorder_pg"].drop("file"))
    pg = pl.concat([_parse(p.read_bytes(), p.name).tables["flight_recorder_pg"] for p in PICKLES])
    assert pg.select("rank", "pg_desc", "last_enqueued", "last_completed").rows() == [
        (0, "default_pg", 5, 4), (1, "default_pg", 5, 4), (2, "default_pg", 4, 2)]


def test_hang_origin_from_the_dumps_alone(tmp_path):
    frames: dict = {}
    for i, p in enumerate(PICKLES):
        for t, df in _parse(p.read_bytes(), p.name, host=f"node0{i + 1}").tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"hang_origin"}, anomaly=False)
    assert errors == []
    (f,) = findings.to_dicts()
    ev = json.loads(f["evidence"])
    assert (f["subject"], f["hosts"]) == ("rank 2", ["node03"])
    assert (ev["target_seq"], ev["op_type"], ev["never_entered"]) == (5, "ALLREDUCE", True)
    assert [(g["last_enqueued"], g["last_completed"], g["ranks"]) for g in ev["seq_groups"]] == [(4, 2, [2]), (5, 4, [0, 1])]


class _System:
    """Unpickling this calls os.system(cmd): what an attacker's dump would do."""

    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


def _evil_pickles(sentinel: Path) -> dict[str, bytes]:
    cmd = f"touch {sentinel}"
    real = pickle.loads(PICKLES[0].read_bytes())  # a real dump's structure, with the payload inside it
    real["entries"][0]["frames"] = [_System(cmd)]
    return {
        "reduce_protocol2": pickle.dumps(_System(cmd), protocol=2),
        "reduce_protocol5": pickle.dumps(_System(cmd), protocol=5),
        "global_protocol0": b"cos\nsystem\n(V" + cmd.encode() + b"\ntR.",
        "inside_a_real_dump": pickle.dumps(real, protocol=2),
        "builtins_eval": b"\x80\x02cbuiltins\neval\nX" + len(f"__import__('os').system('{cmd}')").to_bytes(4, "little")
                         + f"__import__('os').system('{cmd}')".encode() + b"\x85R.",
    }


@pytest.mark.parametrize("case", ["reduce_protocol2", "reduce_protocol5", "global_protocol0", "inside_a_real_dump",
                                  "builtins_eval"])
def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path, case):
    sentinel = tmp_path / "owned"
    data = _evil_pickles(sentinel)[case]
    with pytest.raises(_safe_pickle.PickleRefused):
        _safe_pickle.loads_plain(data)
    res = _parse(data, "nccl_trace_rank_0")
    assert res.rows() == {"flight_recorder": 0, "flight_recorder_pg": 0}
    assert res.unparsed.height == res.lines and res.meta["warning"].startswith("pickle refused:")
    assert "\n" not in res.meta["warning"]
    assert not sentinel.exists()
    # proof that the payload is live: the standard loader would have run it
    if case == "reduce_protocol2":
        pickle.loads(data)
        assert sentinel.exists()


def test_cli_refuses_it_in_one_line(tmp_path):
    sentinel = tmp_path / "owned"
    evil = tmp_path / "nccl_trace_rank_3"
    evil.write_bytes(_evil_pickles(sentinel)["inside_a_real_dump"])
    exe = Path(__file__).parents[1] / ".venv" / "bin" / "forensics"
    out = subprocess.run([str(exe), "parse", str(evil), "--source", "flight_recorder", "--host", "node01"],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "LC_ALL": "C", "TZ": "UTC"})
    refused = [x for x in out.stderr.splitlines() if x.startswith("forensics: warning:") and "pickle refused" in x]
    assert len(refused) == 1 and "would import posix.system" in refused[0] and "Traceback" not in out.stderr
    assert not sentinel.exists()


def test_truncated_and_foreign_inputs_are_refused_in_one_line():
    whole = PICKLES[0].read_bytes()
    for bad in (whole[: len(whole) // 2], b"\x80\x02}q\x00", json.dumps({"a": 1}).encode()):
        res = _parse(bad, "nccl_trace_rank_0")
        assert res.rows() == {"flight_recorder": 0, "flight_recorder_pg": 0} and res.unparsed.height == res.lines
        assert "\n" not in res.meta.get("warning", "")


def test_safe_pickle_docstring():
    failures, tried = doctest.testmod(_safe_pickle, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
