"""The engines give the same answer: the map/reduce split (host-local detectors per host group,
cross-host ones over all hosts) finds exactly what the local engine finds, on simulated bundles
with faults of several layers, serially and as Ray tasks (local Ray, one session fixture)."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths
from forensics.engine import MapReduce, SerialExecutor
from forensics.engine.run import MIN_GROUP_HOSTS, detect_groups, groups_of
from forensics.simulate import SimConfig, write_bundle

# small: 4 nodes x 2 GPUs for 3 minutes, the fleet's benign noise on (more detectors have something to say)
SIZE = dict(nodes=4, gpus_per_node=2, duration_s=180.0, interval_s=2.0, seed=3)
SCENARIOS = ("pfc_storm+xid_79", "straggler+nccl_misconfig")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("engine")
    out = {}
    for s in SCENARIOS:
        p = root / f"{s.replace('+', '_')}.tar"
        write_bundle(SimConfig(scenario=s, **SIZE), p)
        out[s] = p
    return out


def _comparable(analysis) -> dict:
    j = json.loads(json.dumps(analysis.to_json(), default=str))
    j.pop("bundles")
    return j


@pytest.fixture(scope="module")
def local(bundles, tmp_path_factory):
    return {s: _comparable(analyze_paths([p], cache_dir=tmp_path_factory.mktemp("local-cache")))
            for s, p in bundles.items()}


def test_groups_cover_every_host_once():
    for n, slots in ((1, 4), (5, 2), (64, 3), (3, 8)):
        groups = groups_of(n, slots)
        assert sorted(i for g in groups for i in g) == list(range(n))
        assert len(groups) == min(n, slots) and all(groups)


def test_detect_groups_are_not_smaller_than_their_minimum():
    """Each detect group pays a fixed catalog and detector planning: a cluster of many CPUs gets
    groups of at least MIN_GROUP_HOSTS hosts, not one host per CPU."""
    assert MIN_GROUP_HOSTS > 1
    for n, slots, least, want in ((64, 2, 32, 2), (64, 1000, 32, 2), (2000, 1000, 32, 62), (31, 8, 32, 1),
                                  (4, 3, 1, 3), (0, 4, 32, 0)):
        groups = detect_groups(n, slots, least)
        assert len(groups) == want
        assert sorted(i for g in groups for i in g) == list(range(n))
        assert all(len(g) >= min(n, least) for g in groups)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_map_reduce_finds_what_the_local_engine_finds(bundles, local, scenario, tmp_path):
    engine = MapReduce(SerialExecutor(), min_group_hosts=1, parallel_min_bytes=0)
    engine.executor.slots = 3  # 4 hosts in 3 groups: one group of two, cross-host work in the reduce
    got = _comparable(analyze_paths([bundles[scenario]], cache_dir=tmp_path, engine=engine))
    want = local[scenario]
    assert want["findings"], "the scenario must give findings to compare"
    assert {f["kind"] for f in want["findings"]} >= {"straggler"} if "straggler" in scenario else True
    assert got == want  # findings (every field, the ranked order, causes), hosts, coverage, errors
    assert set(engine.timings) == {"parse", "detect_map", "reduce", "reduce_cpu"} | {
        f"detect_map_cpu_{step}" for step in ("catalog", "setup", "detectors", "write")}
    assert all(v >= 0 for v in engine.timings.values())


def test_a_small_input_maps_as_one_task_each(bundles, local, tmp_path):
    """Below the local ingest's PARALLEL_MIN_BYTES of raw data (where the local engine parses in its own
    process) each map is a single task, whatever the slots: one worker's imports and one DuckDB
    catalog, not one per slot; the findings are the same. At or above it, a group per slot."""
    from forensics.ingest.pool import PARALLEL_MIN_BYTES

    class Counting(SerialExecutor):
        slots = 3

        def __init__(self):
            self.tasks = []

        def map(self, fn, items):
            self.tasks.append((fn.__name__, len(items)))
            return super().map(fn, items)

    scenario = "pfc_storm+xid_79"
    engine = MapReduce(Counting(), min_group_hosts=1)
    assert engine.parallel_min_bytes is None  # (the local ingest's threshold)
    got = _comparable(analyze_paths([bundles[scenario]], cache_dir=tmp_path / "small", engine=engine))
    assert got == local[scenario]
    assert engine.executor.tasks == [("parse_group", 1), ("detect_group", 1)]
    assert bundles[scenario].stat().st_size < PARALLEL_MIN_BYTES
    # the same input above a lower threshold: three groups each (4 hosts, 3 slots)
    size = bundles[scenario].stat().st_size
    engine = MapReduce(Counting(), min_group_hosts=1, parallel_min_bytes=size // 100)
    got = _comparable(analyze_paths([bundles[scenario]], cache_dir=tmp_path / "big", engine=engine))
    assert got == local[scenario]
    assert engine.executor.tasks == [("parse_group", 3), ("detect_group", 3)]
    # tables already parsed (no parse this run): the detect map measures the input itself
    engine = MapReduce(Counting(), min_group_hosts=1)
    got = _comparable(analyze_paths([bundles[scenario]], cache_dir=tmp_path / "big", engine=engine))
    assert got == local[scenario]
    assert engine.executor.tasks == [("detect_group", 1)]


def test_same_findings_with_the_maps_derived_relations_cached(bundles, local, tmp_path):
    """Big inputs get their NIC rates derived (numpy) and cached per host group; forced here."""
    scenario = "pfc_storm+xid_79"
    engine = MapReduce(SerialExecutor(), derive="always", min_group_hosts=1, parallel_min_bytes=0)
    engine.executor.slots = 2
    got = _comparable(analyze_paths([bundles[scenario]], cache_dir=tmp_path, engine=engine))
    assert got == local[scenario]
    stores = list((tmp_path).glob("*/tables/_derived/groups/*/nic"))
    assert len(stores) == 2  # one per group of hosts, none for the whole bundle


def test_the_map_reads_no_footer_its_driver_read(bundles, local, tmp_path, monkeypatch):
    """The driver read and checked every table file's footer opening the bundle: the map's groups
    get those facts and build their catalogs without reading a footer again."""
    import forensics.engine.mapstep as mapstep
    from forensics.bundle import footers

    reads = {"map": 0}
    in_map = [False]
    real_file, real_group = footers.pq.ParquetFile, mapstep.detect_group

    def counting(*a, **kw):
        reads["map"] += in_map[0]
        return real_file(*a, **kw)

    def group(*a, **kw):
        in_map[0] = True
        try:
            return real_group(*a, **kw)
        finally:
            in_map[0] = False

    monkeypatch.setattr(footers.pq, "ParquetFile", counting)
    monkeypatch.setattr(mapstep, "detect_group", group)
    engine = MapReduce(SerialExecutor(), min_group_hosts=1, parallel_min_bytes=0)
    engine.executor.slots = 2
    got = _comparable(analyze_paths([bundles["pfc_storm+xid_79"]], cache_dir=tmp_path, engine=engine))
    assert got == local["pfc_storm+xid_79"]
    assert reads["map"] == 0


def test_same_findings_in_a_time_window_and_for_some_kinds(bundles, local, tmp_path):
    path = bundles["pfc_storm+xid_79"]
    t0 = min(dt.datetime.fromisoformat(f["start"]) for f in local["pfc_storm+xid_79"]["findings"] if f["start"]) \
        + dt.timedelta(seconds=30)
    kw = dict(since=t0, until=t0 + dt.timedelta(seconds=90), only={"pfc_storm", "busy_but_slow", "collective_timeout", "anomaly"})
    want = _comparable(analyze_paths([path], cache_dir=tmp_path, **kw))
    got = _comparable(analyze_paths([path], cache_dir=tmp_path, engine=MapReduce(SerialExecutor(), min_group_hosts=1, parallel_min_bytes=0), **kw))
    assert got == want


def test_ray_engine_finds_what_the_local_engine_finds(ray_local, bundles, local, tmp_path):
    from forensics.engine.executors import RayExecutor

    executor = RayExecutor()
    assert executor.slots == 2  # the session's local Ray (ray.init(num_cpus=2)), not a new one
    scenario = "pfc_storm+xid_79"
    got = _comparable(analyze_paths([bundles[scenario]], cache_dir=tmp_path, engine=MapReduce(executor, min_group_hosts=1, parallel_min_bytes=0)))
    assert got == local[scenario]


def _descendants_cmdlines(root: int) -> list[str]:
    """The command lines of every live descendant of process `root` (Linux /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            todo.append(c)
            try:
                out.append(Path(f"/proc/{c}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


def _nice_of_task() -> int:
    import os

    return os.nice(0)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc (Linux)")
def test_the_local_ray_is_lean(ray_local):
    """The Ray `--engine ray` starts here (the session's, started as the engine starts it) runs no log
    monitor and no autoscaler monitor (set through Ray's private RayParams, which `ray.init` does not
    expose: a Ray release that renames them fails here rather than silently starting both again),
    and runs its tasks at this process's priority (worker_niceness 0), not 15 levels below it."""
    import os

    ray = ray_local
    cmds = _descendants_cmdlines(os.getpid())
    assert any("gcs_server" in c for c in cmds) and any("raylet" in c for c in cmds), cmds  # (the tree is Ray's)
    assert not [c for c in cmds if "log_monitor.py" in c or "autoscaler/_private/monitor.py" in c], cmds
    here = sys.modules[__name__]
    ray.cloudpickle.register_pickle_by_value(here)  # (the workers cannot import this test module)
    try:
        assert ray.get(ray.remote(num_cpus=1)(_nice_of_task).remote()) == os.nice(0)
    finally:
        ray.cloudpickle.unregister_pickle_by_value(here)


def test_ray_address_needs_the_ray_engine(bundles, tmp_path):
    r = subprocess.run([str(Path(sys.executable).with_name("forensics")), "analyze", str(bundles[SCENARIOS[0]]),
                        "--ray-address", "auto", "--cache-dir", str(tmp_path), "-q"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert "--ray-address goes with --engine ray" in r.stderr


def test_an_unreachable_ray_address_is_one_line(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test,ray]')")
    r = subprocess.run([str(Path(sys.executable).with_name("forensics")), "analyze", "sample_bundles/pfc_storm.tar.zst",
                        "--engine", "ray", "--ray-address", "127.0.0.1:1", "--cache-dir", str(tmp_path), "-q"],
                       capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert "cannot reach Ray at 127.0.0.1:1" in r.stderr


def test_a_ray_that_does_not_start_is_one_line(monkeypatch):
    """Ray raises a bare Exception when its node does not come up in time (a loaded machine): one
    line naming it, not a traceback."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test,ray]')")
    from forensics.engine.executors import RayExecutor
    from forensics.errors import UserError

    def timed_out(**kw):
        raise Exception("The current node timed out during startup. This could happen because some of the raylet "
                        "failed to startup or the GCS has become overloaded.\nmore")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", timed_out)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with pytest.raises(UserError) as err:
        RayExecutor()
    assert str(err.value).startswith("cannot start or reach Ray on this machine: The current node timed out")
    assert "\n" not in str(err.value)


@pytest.fixture(scope="module")
def with_train_log(tmp_path_factory):
    """Seed 000's case study (its training log at ~2,040 tokens/s per GPU), small."""
    path = tmp_path_factory.mktemp("engine-params") / "seed000.tar"
    write_bundle(SimConfig(scenario="seed000_case_study", nodes=4, gpus_per_node=2, duration_s=180.0, interval_s=2.0,
                           seed=5, confounders=False), path)
    return path


PARAMS = {"expect_tokens_per_s": 3200}


def _shortfall(j: dict) -> list[dict]:
    return [f for f in j["findings"] if f["kind"] == "throughput_shortfall"]


def test_detector_parameters_reach_the_map_step(with_train_log, tmp_path):
    """`--expect-tokens-per-s` (a parameter of the host-local throughput_shortfall) gives the same
    analysis on both engines; without it neither engine states a shortfall."""
    want = _comparable(analyze_paths([with_train_log], cache_dir=tmp_path, params=PARAMS))
    assert len(_shortfall(want)) == 1  # the parameter took effect
    engine = MapReduce(SerialExecutor(), min_group_hosts=1, parallel_min_bytes=0)
    engine.executor.slots = 3
    got = _comparable(analyze_paths([with_train_log], cache_dir=tmp_path, engine=engine, params=PARAMS))
    assert got == want
    plain = _comparable(analyze_paths([with_train_log], cache_dir=tmp_path, engine=MapReduce(SerialExecutor(), min_group_hosts=1, parallel_min_bytes=0)))
    assert _shortfall(plain) == []


def test_ray_engine_takes_detector_parameters(ray_local, with_train_log, tmp_path):
    from forensics.engine.executors import RayExecutor

    want = _comparable(analyze_paths([with_train_log], cache_dir=tmp_path, params=PARAMS))
    got = _comparable(analyze_paths([with_train_log], cache_dir=tmp_path, engine=MapReduce(RayExecutor(), min_group_hosts=1, parallel_min_bytes=0), params=PARAMS))
    assert len(_shortfall(got)) == 1 and got == want


def test_rays_token_notice_is_not_printed_but_its_errors_are(caplog):
    """Ray 2.60 logs "Token authentication is enabled for this Ray cluster ..." on stderr whenever it
    starts a local cluster: `--engine ray` drops that notice (by its text) and nothing else."""
    import logging

    from forensics.engine.executors import _quiet_token_notice

    name = "ray._private.authentication.authentication_token_setup"
    _quiet_token_notice()
    _quiet_token_notice()  # (once is enough: no second filter)
    lg = logging.getLogger(name)
    assert len(lg.filters) == 1
    with caplog.at_level(logging.INFO, logger=name):
        lg.warning("Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to opt out.")
        lg.warning("Token authentication is disabled for this Ray cluster. Anyone with network access ...")
        lg.error("Token authentication is enabled for this Ray cluster but the token is invalid")
        ray_setup = pytest.importorskip("ray._private.authentication.authentication_token_setup",
                                        reason="Ray is not installed (pip install -e '.[test,ray]')")
        if hasattr(ray_setup, "_warn_token_auth_enabled"):  # the very call Ray makes when it starts
            ray_setup._warn_token_auth_enabled()
    said = [r.getMessage() for r in caplog.records if r.name == name]
    assert not [m for m in said if "enabled for this Ray cluster. Set" in m], said
    assert any("is disabled for this Ray cluster" in m for m in said) and any("token is invalid" in m for m in said)
