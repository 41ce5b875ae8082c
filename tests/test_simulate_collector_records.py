"""The simulator writes what `forensics collect` writes: command names, argv, sources, raw file paths,
commands.jsonl and host.json fields, marker lines -- taken from the collector's specs, and compared
field by field with a bundle the collector writes with stand-ins on PATH."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import forensics.collect.main as cmain
from forensics.collect.specs import by_name
from forensics.layout import format_marker, parse_marker, raw_path
from forensics.simulate import SimConfig, Simulation
from forensics.simulate.bundle import NOT_SIMULATED
from test_collect_run import node_env  # noqa: F401  (fixture: stand-ins on PATH, a fake sysfs)

SPEC = by_name()
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _sim_hosts(scenario: str = "xid_79", fabric: str | None = None) -> dict[str, dict[str, bytes]]:
    """{host: {member: bytes}} of a small simulated bundle (xid_79: a lost GPU, a watchdog log)."""
    sim = Simulation(SimConfig(scenario, nodes=4, gpus_per_node=2, duration_s=60, interval_s=2.0, seed=1, fabric=fabric))
    out = {}
    for h in range(sim.cfg.nodes):
        files = dict(sim.host_files(h))
        name = sim.cluster.hosts[h].name
        out[name] = {k[len(f"hosts/{name}/"):]: v for k, v in files.items()}
    return out


@pytest.fixture(scope="module")
def sim_hosts():
    """(host, {member: bytes}) of a RoCE bundle, then of an InfiniBand one (its rails have no ethtool -S, and
    commands of their own: perfquery -x)."""
    return [pair for fabric in (None, "infiniband") for pair in _sim_hosts(fabric=fabric).items()]


def _argv_matches(template, argv) -> dict | None:
    """Placeholder values when `argv` is `template` filled in (literal arguments equal), else None."""
    if len(template) != len(argv):
        return None
    values = {}
    for t, a in zip(template, argv):
        names = PLACEHOLDER.findall(t)
        if not names:
            if t != a:
                return None
            continue
        pattern = "^" + PLACEHOLDER.sub(r"(?P<\1>.+)", re.escape(t).replace(r"\{", "{").replace(r"\}", "}")) + "$"
        m = re.match(pattern, a)
        if not m:
            return None
        values.update(m.groupdict())
    return values


def _keys(obj):
    """The key tree of a JSON value (lists: the union of their items' trees)."""
    if isinstance(obj, dict):
        return {k: _keys(v) for k, v in obj.items()}
    if isinstance(obj, list):
        merged = {}
        for item in obj:
            k = _keys(item)
            if isinstance(k, dict):
                merged.update(k)
        return merged or None
    return None


RECORD_KEYS = set(cmain.command_record("n", [], "s", "t", "t", 0, 0, False, False, None, "", None))


def test_every_simulated_command_is_one_of_the_collectors_specs(sim_hosts):
    seen = set()
    for host, files in sim_hosts:
        entries = [json.loads(ln) for ln in files["commands.jsonl"].decode().splitlines()]
        assert files["commands.jsonl"].decode() == cmain.commands_text(entries)  # order and serialisation
        for e in entries:
            seen.add(e["name"])
            spec = SPEC.get(e["name"])
            extra = {"sample"} if spec is not None and spec.mode == "snapshot" else set()
            assert set(e) == RECORD_KEYS | extra, e["name"]
            if e["name"] == cmain.NCCL_NAME:
                assert e["source"] == cmain.NCCL_SOURCE and e["argv"][0] == cmain.NCCL_COPY and len(e["argv"]) == 2
                assert e["raw_file"] == raw_path(host, cmain.NCCL_SOURCE, os.path.basename(e["argv"][1]))
                continue
            assert spec is not None, f"{host}: {e['name']} is no command of the collector"
            assert e["source"] == spec.source
            values = None
            for template in (spec.argv,) + spec.fallbacks + ((spec.argv_once,) if spec.argv_once else ()):
                values = _argv_matches(template, e["argv"])
                if values is not None:
                    break
            assert values is not None, f"{e['name']}: argv {e['argv']} is none the collector runs"
            if spec.mode == "stream":  # the values the collector computes for that interval and count
                n = int(values.get("count", 1)) - (1 if spec.source == "iostat" and "count" in values else 0)
                iv = int(values["interval_ms"]) / 1000 if "interval_ms" in values else float(values["interval"])
                assert e["argv"] == cmain.fill(spec.argv, **cmain.stream_values(spec, iv, n))
            if e["error"] is None:
                assert e["raw_file"] == raw_path(host, spec.source, spec.raw.format(**values)), e["name"]
            else:
                assert e["raw_file"] is None
        # every raw file was written by a recorded command (processes.jsonl: by the collector itself)
        written = {e["raw_file"] for e in entries if e["raw_file"]}
        raw = {f"hosts/{host}/{k}" for k in files if k.startswith("raw/")}
        assert raw - written == {raw_path(host, "collector", "processes.jsonl")}
        assert written <= raw
    assert NOT_SIMULATED <= set(SPEC), "NOT_SIMULATED names a spec the collector no longer has"
    assert seen == (set(SPEC) - NOT_SIMULATED) | {cmain.NCCL_NAME}, \
        "the simulator must cover every spec of the collector (or list it in simulate.bundle.NOT_SIMULATED)"


def test_snapshot_markers_and_samples_are_the_collectors(sim_hosts):
    for host, files in sim_hosts:
        entries = [json.loads(ln) for ln in files["commands.jsonl"].decode().splitlines()]
        snaps = [e for e in entries if SPEC.get(e["name"]) is not None and SPEC[e["name"]].mode == "snapshot"]
        assert snaps
        by_file: dict[str, list[dict]] = {}
        for e in snaps:
            by_file.setdefault(e["raw_file"], []).append(e)
        for rel, es in by_file.items():
            data = files[rel[len(f"hosts/{host}/"):]]
            lines = data.decode().splitlines(keepends=True)
            marks = [(i, parse_marker(ln)) for i, ln in enumerate(lines) if parse_marker(ln)]
            assert len(marks) == len(es) and lines[0] == lines[marks[0][0]]
            for k, (e, (i, (ts, argv))) in enumerate(zip(es, marks)):
                assert lines[i].rstrip("\n") == format_marker(ts, e["argv"])
                assert ts.isoformat(timespec="microseconds") == e["start"]
                end = marks[k + 1][0] if k + 1 < len(marks) else len(lines)
                assert e["bytes"] == len("".join(lines[i + 1:end]).encode())
            samples = [e["sample"] for e in es]
            assert samples == sorted(samples) and samples[0] == 0


def test_host_json_is_the_collectors(sim_hosts):
    for host, files in sim_hosts:
        info = json.loads(files["host.json"])
        assert files["host.json"].decode() == cmain.host_json_text(info)
        ref = cmain.host_record("h", "h", "k", "t", None, "UTC", 0, "t", 1.0, None, None, "v", "3.8", [], None, 1, 1,
                                "t", "t", [{"iface": "x", "pci_addr": None, "numa_node": None, "driver": None,
                                            "rdma_dev": None, "mac": None, "mtu": None, "speed_mbps": None,
                                            "operstate": None}])
        assert _keys(info) == _keys(ref)


def test_records_match_a_stand_in_collect_bundle(tmp_path, node_env, sim_hosts):
    """Field by field: what the collector wrote with stand-ins vs what the simulator writes."""
    from test_collect_run import commands, fx, members, replay_config

    cfg = replay_config(None, variant=0)
    cfg["sar"]["by_arg"].update({"EDEV": cfg["sar"]["by_arg"]["DEV"], "-q": cfg["sar"]["by_arg"]["-u"]})
    node_env(cfg)
    nccl = tmp_path / "nccl-logs"
    nccl.mkdir()
    shutil.copy(fx("nccl", "issue1814-ib-completion"), nccl / "nccl.gpu-a01.4242.log")
    out = tmp_path / "a.tar"
    assert cmain.main(["--duration", "1", "--interval", "0.5", "--out", str(out), "--host", "gpu-a01", "--quiet",
                       "--raw-only", "--nccl-log", str(nccl / "*.log")]) == 0
    m = members(out)
    real = {}
    for e in commands(m, "gpu-a01"):
        real.setdefault(e["name"], e)
    host, files = min(sim_hosts, key=lambda pair: pair[0])  # the RoCE bundle's first host
    sim = {}
    for e in (json.loads(ln) for ln in files["commands.jsonl"].decode().splitlines()):
        sim.setdefault(e["name"], e)
    assert set(real) - NOT_SIMULATED <= set(sim) | {"chronyc_tracking", "timedatectl"}  # no clock tool stand-ins
    for name, r in real.items():
        if name in NOT_SIMULATED:
            continue
        s = sim[name]
        assert set(s) == set(r), name
        assert s["source"] == r["source"], name
        for k in ("truncated", "timed_out"):
            assert s[k] == r[k] is False, name
        if r["error"] is None:
            assert s["error"] is None and (s["exit_code"] is None) == (r["exit_code"] is None), name
            assert r["raw_file"].replace("/gpu-a01/", f"/{host}/") == s["raw_file"] or name in ("ethtool_s", "nccl_log")
            assert s["raw_file"].rsplit("/", 1)[0] == r["raw_file"].replace("/gpu-a01/", f"/{host}/").rsplit("/", 1)[0]
        spec = SPEC.get(name)
        if spec is not None and spec.mode == "once":
            assert s["argv"] == r["argv"], name
        else:
            assert len(s["argv"]) == len(r["argv"]) and s["argv"][0] == r["argv"][0], name
    assert _keys(json.loads(files["host.json"])) == _keys(json.loads(m["hosts/gpu-a01/host.json"]))
    # the GPU processes: the same keys in the same (sorted) order
    sim_proc = json.loads(files["raw/collector/processes.jsonl"].decode().splitlines()[0])
    assert list(sim_proc) == sorted(sim_proc)
    assert set(sim_proc) == {"pid", "cmdline", "cpus_allowed_list", "mems_allowed_list", "env", "gpus", "gpu_uuids"}


def test_spec_names_are_not_repeated_in_the_simulator():
    """The simulator takes names and argv from the specs: none of the names or argv it once had of its own."""
    root = Path(__file__).resolve().parent.parent / "forensics" / "simulate"
    text = "\n".join(p.read_text() for p in sorted(root.glob("*.py")))
    for old in ("numactl_H", "nvidia_smi_topo_m", "nvidia_smi_q_x", "sar_P_ALL", "sar_n_DEV", "sar_n_EDEV",
                '["cat"', '"-l", str('):
        assert old not in text, old
