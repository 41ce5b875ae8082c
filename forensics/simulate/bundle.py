"""Assemble a simulated bundle exactly as ``forensics collect`` + ``forensics bundle`` lay it out.

Hosts are generated one at a time (memory stays bounded) and written in a fixed order; every
member gets the same mtime and no wall clock is read anywhere, so the same arguments and seed give
byte-identical archives.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from forensics import __version__
from forensics.bundle import trust
from forensics.collect import main as cmain
from forensics.collect.specs import Spec, by_name
from forensics.layout import FORMAT_VERSION, MANIFEST, MARKER_PREFIX, TABLES_DIR, TRUTH_DIR, parse_marker, raw_path
from forensics.simulate import (fmt_dcgm, fmt_dmesg, fmt_ethtool, fmt_fabricmanager, fmt_fr, fmt_host, fmt_infiniband, fmt_nccl,
                                fmt_nvlink, fmt_nvsmi, fmt_qos, fmt_sysstat, fmt_torch, fmt_train)
from forensics.simulate.config import COUNTER_EVERY_S, NVSMI_Q_EVERY_S, PER_CPU_EVERY_S, SimConfig, fmt_interval
from forensics.simulate.hardware import build_cluster
from forensics.simulate.job import JobModel
from forensics.simulate.plan import iso
from forensics.simulate.compose import new_plan
from forensics.simulate.series import HostModel


#: the collector's specs by name; NCCL log copies are recorded like a spec of their own
SPEC = by_name()
NCCL_SPEC = Spec(cmain.NCCL_NAME, (cmain.NCCL_COPY,), cmain.NCCL_SOURCE, None)
#: collector specs the simulator does not model yet (a bundle then lacks them, as if never collected);
#: tests/test_simulate_collector_records.py checks every other spec is simulated
#: (ncclras: the simulated jobs do not model NCCL's RAS network; a bundle has no RAS report, as from a
#: node whose ncclras found no job to ask; scontrol_job, sacct_job: the simulated jobs are not Slurm
#: jobs, so a bundle is as from a node without SLURM_JOB_ID, where the collector skips both)
NOT_SIMULATED: frozenset[str] = frozenset({"ncclras", "scontrol_job", "sacct_job"})
MARKER = MARKER_PREFIX.encode()


class Simulation:
    """The model of one run: cluster, plan (faults), job. Hosts are rendered on demand."""

    def __init__(self, cfg: SimConfig):
        self.cfg = cfg
        self.cluster = build_cluster(cfg)
        self.plan = new_plan(cfg, self.cluster)
        self.model = JobModel(self.plan)

    @property
    def end_true(self) -> float:
        return self.cfg.t0 + self.cfg.duration_s + 2.0

    def labels(self) -> dict:
        labels = {"scenario": self.cfg.scenario, "seed": self.cfg.seed, "faults": self.plan.faults,
                  "effects": self.plan.effects,
                  "clock_offsets_s": {h.name: round(h.offset_s, 6) for h in self.cluster.hosts}}
        # said where they differ from a silent single-fault run (whose labels keep their old bytes)
        if self.cfg.confounders:
            labels["confounders"] = True
        if self.cfg.same_host:
            labels["same_host"] = True
        if self.cfg.infiniband:
            labels["fabric"] = "infiniband"
        steps = {h.name: {"at": iso(h.clock_step[0]), "step_s": round(h.clock_step[1], 6)}
                 for h in self.cluster.hosts if h.clock_step is not None}
        if steps:
            labels["clock_steps"] = steps
        return labels

    def manifest(self) -> bytes:
        man = {"format_version": FORMAT_VERSION, "created_by": f"forensics {__version__}",
               "created_at": iso(self.end_true + 60.0), "hosts": sorted(h.name for h in self.cluster.hosts),
               "redaction": None, "kind": "simulated"}
        return (json.dumps(man, indent=1) + "\n").encode()

    def host_files(self, h: int) -> list[tuple[str, bytes]]:
        """(member name, bytes) of one host, sorted by name.

        Command names, argv, sources and raw file names come from the collector's specs
        (:mod:`forensics.collect.specs`) and its records (:func:`forensics.collect.main.command_record`),
        so every entry is one ``forensics collect`` writes for that command."""
        cfg, plan, model = self.cfg, self.plan, self.model
        host = self.cluster.hosts[h]
        hm = HostModel(model, h)
        iv = cfg.interval_s
        n = cfg.samples
        start = cfg.t0 + host.jitter_s
        end = start + cfg.duration_s
        files: dict[str, bytes] = {}
        cmds: list[dict] = []

        def add(spec, data, t0, t1, argv=None, raw=None, exit_code=0, stderr="", error=None):
            """A command of `spec` that wrote `data` (None: it did not run here, e.g. not installed)."""
            argv = list(spec.argv) if argv is None else argv
            rel = None
            if data is not None:
                rel = raw_path(host.name, spec.source, raw or spec.raw)
                files[rel] = data
            cmds.append(fmt_host.command_entry(host, spec.name, argv, spec.source, t0, t1, rel,
                                               0 if data is None else len(data), exit_code, stderr, error))

        def missing(spec, t):
            add(spec, None, t, t, exit_code=None, error="not found")

        def snapshots(spec, data, duration_s, values=None):
            """A snapshot spec's series: one entry per sample (at its marker's time), as the collector appends them."""
            rel = raw_path(host.name, spec.source, spec.raw.format(**(values or {})))
            files[rel] = data
            argv = cmain.fill(spec.argv, **(values or {}))
            offs = [0]
            while (i := data.find(b"\n" + MARKER, offs[-1])) >= 0:
                offs.append(i + 1)
            for j, a in enumerate(offs):
                b = offs[j + 1] if j + 1 < len(offs) else len(data)
                nl = data.index(b"\n", a)
                ts, _ = parse_marker(data[a:nl].decode())
                t0 = host.true_of(ts.timestamp())
                cmds.append(cmain.command_record(
                    spec.name, argv, spec.source, cmain.proc.iso(ts), fmt_host.iso_host(host.wall(t0 + duration_s)),
                    0, b - nl - 1, False, False, None, "", rel, sample=int(round((t0 - s0) / iv))))

        # one-off commands of the start, in the collector's order
        at = start + 0.7
        alive = fmt_host.compute_apps(host, model, at)
        add(SPEC["numactl_h"], fmt_host.numactl(host, model, start), start + 0.01, start + 0.02)
        add(SPEC["nvidia_smi_topo"], fmt_nvsmi.topo(host), start + 0.03, start + 0.21)
        add(SPEC["nvidia_smi_qx"], fmt_nvsmi.q_xml(host, hm, start + 0.3), start + 0.22, start + 0.61)
        chrony = timedatectl = None
        if host.ntp == "chronyc":
            chrony = fmt_host.chronyc(host, start + 0.8)
            add(SPEC["chronyc_tracking"], chrony, start + 0.62, start + 0.64)
            timedatectl = fmt_host.timedatectl(host, start + 0.8, synchronized=True)
            add(SPEC["timedatectl"], timedatectl, start + 0.64, start + 0.67)
        else:
            missing(SPEC["chronyc_tracking"], start + 0.62)
            timedatectl = fmt_host.timedatectl(host, start + 0.8)
            add(SPEC["timedatectl"], timedatectl, start + 0.63, start + 0.66)
        add(SPEC["nvidia_smi_apps"], alive, start + 0.67, start + 0.71)
        add(SPEC["nvidia_smi_gpus"], fmt_host.gpu_index(host), start + 0.71, start + 0.75)
        add(SPEC["ibstat"], fmt_infiniband.ibstat(host, plan, h, start + 0.76), start + 0.75, start + 0.77)
        add(SPEC["nvidia_smi_nvlink_status"], fmt_nvlink.status(host, hm, plan, h, start + 0.78), start + 0.77, start + 0.79)
        add(SPEC["dcgmi_discovery"], fmt_dcgm.discovery(host), start + 0.79, start + 0.8)
        procs = fmt_host.processes_jsonl(host, plan, model, at)
        if procs:  # written by the collector itself: no command entry
            files[raw_path(host.name, "collector", "processes.jsonl")] = procs
        # sampled series
        s0 = start + 0.9
        spec = SPEC["iostat"]
        add(spec, fmt_sysstat.iostat(hm, host, s0, iv, n), s0, s0 + n * iv,
            argv=cmain.fill(spec.argv, **cmain.stream_values(spec, iv, n)))
        for name, fn, every in (("sar_u", fmt_sysstat.sar_u, iv),
                                ("sar_p_all", fmt_sysstat.sar_p_all, cfg.every(PER_CPU_EVERY_S)),
                                ("sar_n_dev", fmt_sysstat.sar_n_dev, iv),
                                ("sar_n_edev", fmt_sysstat.sar_n_edev, iv),
                                ("sar_r", fmt_sysstat.sar_r, iv),
                                ("sar_q", fmt_sysstat.sar_q, iv),
                                ("sar_w", fmt_sysstat.sar_w, iv),
                                ("sar_b", fmt_sysstat.sar_b, iv),
                                ("sar_s", fmt_sysstat.sar_s, iv)):
            spec = SPEC[name]
            k = cmain.samples(cfg.duration_s, every)
            add(spec, fn(hm, host, s0 + 0.01, every, k), s0 + 0.01, s0 + 0.01 + k * every,
                argv=cmain.fill(spec.argv, **cmain.stream_values(spec, every, k)))
        times = s0 + 0.02 + iv * np.arange(n)
        lost = plan.crash is not None and plan.crash.gpu_lost and any(hh == h for hh, _ in plan.crash.dead)
        stderr = ""
        if lost:
            gg = [g for hh, g in plan.crash.dead if hh == h][0]
            stderr = (f"Unable to determine the device handle for GPU{host.gpus[gg].pci[4:]}: GPU is lost.  "
                      "Reboot the system to recover this GPU\n")
        # `nvidia-smi -lms` runs until the collector stops it: no exit code, not an error
        add(SPEC["nvidia_smi_query_gpu"], fmt_nvsmi.query_csv(host, hm, times, iv), times[0], times[-1],
            argv=fmt_nvsmi.csv_argv(iv), exit_code=None, stderr=stderr)
        spec = SPEC["dcgmi_dmon"]  # DCGM's field series, beside nvidia-smi's (each with its own sample times)
        dt_ = s0 + 0.04 + iv * np.arange(n)
        add(spec, fmt_dcgm.dmon_stream(host, hm, plan, h, dt_), dt_[0], dt_[-1] + 0.01,
            argv=cmain.fill(spec.argv, **cmain.stream_values(spec, iv, n)))
        qe = cfg.every(NVSMI_Q_EVERY_S)
        qt = s0 + 0.05 + qe * np.arange(int(cfg.duration_s // qe) + 1)
        snapshots(SPEC["nvidia_smi_q"], fmt_nvsmi.q_snapshots(host, hm, qt), 0.4)
        spec = SPEC["nvidia_smi_nvlink_errors"]
        et = s0 + 0.07 + qe * np.arange(int(cfg.duration_s // qe) + 1)
        snapshots(spec, fmt_nvlink.errors_snapshots(host, hm, plan, h, et, " ".join(spec.argv)), 0.05)
        ce = cfg.every(COUNTER_EVERY_S)
        ct = s0 + 0.03 + ce * np.arange(int(cfg.duration_s // ce) + 1)
        spec = SPEC["nvidia_smi_nvlink"]
        snapshots(spec, fmt_nvsmi.nvlink_snapshots(host, hm, ct + 0.001, " ".join(spec.argv)), 0.05)
        ib = SPEC["ib_sysfs"]
        gid_spec = SPEC["ib_gids"]
        gt = s0 + 0.035 + gid_spec.min_interval * np.arange(int(cfg.duration_s // gid_spec.min_interval) + 1)
        for k, nic in enumerate(host.nics):
            tk = ct + 0.004 * k
            eth = hm.nic_counters(nic, tk)  # (the port model; an InfiniBand port has no netdev to run these on)
            if not nic.infiniband:
                snapshots(SPEC["ethtool_s"], fmt_ethtool.ethtool_series(nic, eth, host.wall(tk)), 0.003, {"iface": nic.iface})
                q = SPEC["mlnx_qos"]
                snapshots(q, fmt_qos.qos(nic, plan, h, host.wall(tk[0] + 0.0025), " ".join(cmain.fill(q.argv, iface=nic.iface))),
                          0.02, {"iface": nic.iface})
            values = {"ibdev": nic.rdma, "port": "1"}
            snapshots(ib, fmt_infiniband.sysfs_series(plan, h, nic, eth, tk, host.wall(tk + 0.002),
                                                      " ".join(cmain.fill(ib.argv, **values))), 0.001, values)
            snapshots(gid_spec, fmt_infiniband.gid_snapshots(nic, host.wall(gt + 0.004 * k),
                                                             " ".join(cmain.fill(gid_spec.argv, **values))), 0.002, values)
            if nic.infiniband:  # (perfquery -x runs on InfiniBand link-layer ports only)
                pq = SPEC["ib_perfquery_x"]
                snapshots(pq, fmt_infiniband.perfquery_x_series(host, plan, h, nic, eth, tk, host.wall(tk + 0.003),
                                                                " ".join(cmain.fill(pq.argv, **values))), 0.002, values)
            ml = SPEC["mlxlink"]
            mt = tk[::max(1, int(round(ml.min_interval / ce)))] + 0.0031
            snapshots(ml, fmt_infiniband.mlxlink_series(host, plan, h, nic, hm.nic_counters(nic, mt), mt, host.wall(mt),
                                                        " ".join(cmain.fill(ml.argv, **values))), 1.2, values)
        # after sampling: the kernel log and the job's logs (copied)
        cap = end + 1.2
        add(SPEC["dmesg"], fmt_dmesg.dmesg(host, plan, cfg.seed, cap), cap, cap + 0.05)
        add(SPEC["dcgmi_diag"], fmt_dcgm.diag_r1(plan, h, cfg.gpus_per_node, cap + 0.06), cap + 0.06, cap + 2.2)
        add(SPEC["fabricmanager_journal"], fmt_fabricmanager.journal(host, cfg.seed), cap + 2.21, cap + 2.25)
        add(SPEC["fabricmanager_log"], fmt_fabricmanager.log(host, cfg.seed, plan.fm_log.get(h, ()), cap), cap + 2.26, cap + 2.27)
        for g in range(cfg.gpus_per_node):
            pid = host.pid(g)
            name = f"nccl.{host.name}.{pid}.log"
            add(NCCL_SPEC, fmt_nccl.nccl_file(self.cluster, plan, model, h, g), cap + 0.1, cap + 0.11,
                argv=[cmain.NCCL_COPY, f"/var/log/nccl/{name}"], raw=name)
        hung = plan.crash is not None and plan.crash.stuck is not None
        wd = (fmt_torch.hang_log if hung else fmt_nccl.watchdog_log)(self.cluster, plan, model, h)
        if wd:
            name = f"torchrun-{host.name}.log"
            add(NCCL_SPEC, wd, cap + 0.12, cap + 0.13, argv=[cmain.NCCL_COPY, f"/var/log/train/{name}"], raw=name)
        for R, dump in fmt_fr.dumps(self.cluster, plan, model, h):
            name = f"{fmt_fr.PREFIX.rsplit('/', 1)[1]}{R}"
            add(NCCL_SPEC, dump, cap + 0.135, cap + 0.136, argv=[cmain.NCCL_COPY, fmt_fr.PREFIX + str(R)], raw=name)
        tlog = fmt_train.train_log(self.cluster, plan, model, h)
        if tlog:
            name, tlog = tlog
            # copied by the collector's `--nccl-log /var/log/train/*.log` into raw/nccl, as a real one is
            # (ingest reads it with the train_log source: ingest/host.py routes it by content)
            add(NCCL_SPEC, tlog, cap + 0.14, cap + 0.15, argv=[cmain.NCCL_COPY, f"/var/log/train/{name}"], raw=name)
        argv = ["forensics", "collect", "--duration", fmt_interval(cfg.duration_s), "--interval", fmt_interval(iv),
                "--nccl-log", "/var/log/nccl/*.log", "--nccl-log", "/var/log/train/*.log"]
        if plan.crash is not None:  # the Flight Recorder dumps of a job that stops (TORCH_NCCL_DUMP_ON_TIMEOUT=1) too
            argv += ["--nccl-log", fmt_fr.PREFIX + "*"]
        base = f"hosts/{host.name}"
        files[f"{base}/host.json"] = fmt_host.host_json(host, cfg, start, cap + 0.2, argv, chrony, timedatectl)
        files[f"{base}/commands.jsonl"] = fmt_host.commands_jsonl(cmds)
        return sorted(files.items())

    def members(self) -> Iterator[tuple[str, bytes]]:
        """Bundle members in archive order: manifest, hosts (sorted, one at a time), truth."""
        yield MANIFEST, self.manifest()
        for h in sorted(range(self.cfg.nodes), key=lambda i: self.cluster.hosts[i].name):
            yield from self.host_files(h)
        yield f"{TRUTH_DIR}/labels.json", (json.dumps(self.labels(), indent=1) + "\n").encode()


def ingest_available() -> bool:
    try:
        from forensics.ingest.run import ingest_bundle  # noqa: F401
    except ImportError:
        return False
    return True


def write_bundle(cfg: SimConfig, out: Path | str, tables: bool | None = None,
                 progress: Callable[[str], None] | None = None) -> dict:
    """Simulate and write the bundle at `out` (.tar, .tar.gz, .tar.zst). With tables (default: when
    the ingest layer is importable) the raw tree is parsed into tables/ as collect does."""
    from forensics.collect.tarball import AtomicTar

    sim = Simulation(cfg)
    out = Path(out)
    mtime = int(sim.end_true + 60)
    if tables is None:
        tables = ingest_available()
    sizes: dict[str, int] = {}
    tar = AtomicTar(out, mtime=mtime)
    try:
        if not tables:
            for name, data in sim.members():
                if progress and name.endswith("host.json"):
                    progress(f"writing {name.split('/')[1]}")
                tar.add_bytes(name, data)
                sizes[name] = len(data)
        else:
            _write_with_tables(sim, tar, sizes, progress)
    except BaseException:
        tar.abort()
        raise
    tar.close()
    return {"out": str(out), "members": len(sizes), "raw_bytes": sum(sizes.values()), "labels": sim.labels(),
            "tables": bool(tables)}


def _write_with_tables(sim: Simulation, tar, sizes: dict, progress) -> None:
    from forensics.ingest.run import ingest_bundle

    stage = Path(tempfile.mkdtemp(prefix="forensics-sim-"))
    try:
        truth = None
        for name, data in sim.members():
            if name.startswith(TRUTH_DIR + "/"):
                truth = (name, data)
                continue
            p = stage / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        if progress:
            progress("parsing raw outputs into tables")
        ingest_bundle(stage)
        meta = stage / TABLES_DIR / "_meta.json"
        if meta.is_file():  # the ingest stamps its wall clock and seals for this machine: the
            m = trust.unsealed(json.loads(meta.read_text()))  # simulated time, no local seal
            m["created_at"] = iso(sim.end_true + 60.0)
            meta.write_text(json.dumps(m, indent=1, sort_keys=True) + "\n")
        members = []
        for p in sorted(stage.rglob("*")):
            if p.is_file():
                members.append(p.relative_to(stage).as_posix())
        order = {MANIFEST: 0, "hosts": 1, TABLES_DIR: 2}
        members.sort(key=lambda rel: (order.get(rel.split("/", 1)[0], 3), rel))
        for rel in members:
            data = (stage / rel).read_bytes()
            tar.add_bytes(rel, data)
            sizes[rel] = len(data)
        if truth:
            tar.add_bytes(*truth)
            sizes[truth[0]] = len(truth[1])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
