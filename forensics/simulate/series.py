"""Per-host time series from the job model: GPU state, NIC counters, CPU, disks, memory, queues.

All functions take *true* times; the writers shift them by the host's clock offset when printing.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from forensics.simulate.config import rng
from forensics.simulate.hardware import NCPU, node_cpus
from forensics.simulate.job import COMM, COMPUTE, IDLE, NONE, OPTIM, SPIN, JobModel

P_IDLE = 71.5          # W, no process
P_CTX = 108.0          # W, context, no kernel
P_COMPUTE = 640.0      # W, GEMMs
P_SPIN = 230.0         # W, NCCL kernel waiting on the network
P_OPT = 430.0
P_LIMIT = 700.0
SM_MAX = 1980
SM_IDLE = 345
MEM_CLOCK = 2619
MEM_TOTAL = 81559
FRAME = 4148           # bytes on the wire per RoCE data packet (4096 MTU)
NVLINKS = 18           # NVLink 4 links of an H100 SXM (topo -m: NV18)

# DCGM profiling activity of each phase (fractions of the sample window; the model's assumptions, not
# thresholds): GEMMs keep nearly every SM busy with tensor cores half the time; an NCCL kernel occupies
# only its channels' blocks (24 of an H100's 132 SMs), spinning or copying, with no tensor work; the
# optimizer's element-wise kernels fill the SMs and stream memory. (sm_active, sm_occupancy,
# tensor_active, dram_active) per phase
ACTIVITY = {"compute": (0.93, 0.31, 0.56, 0.36), "comm": (24 / 132, 0.03, 0.0, 0.07), "spin": (24 / 132, 0.02, 0.0, 0.01),
            "optim": (0.86, 0.45, 0.02, 0.68)}

R_IDLE, R_APP, R_SW_POWER, R_HW_SLOW, R_SYNC, R_SW_THERMAL, R_HW_THERMAL, R_HW_BRAKE = (
    0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80)


class HostModel:
    """Series of one host. Sample windows are [t - w, t] in true time."""

    def __init__(self, model: JobModel, h: int):
        self.m = model
        self.plan = model.plan
        self.h = h
        self.host = self.plan.cluster.hosts[h]
        self.cfg = self.plan.cluster.cfg
        self.G = model.G
        self._phases = [model.phases(h, g) for g in range(self.G)]
        self._temp = None

    # ------------------------------------------------------------------ GPUs
    def ctx(self, g: int, t: np.ndarray) -> np.ndarray:
        return (t >= self.m.t_launch) & (t < self.m.proc_end[self.h, g])

    def _power(self, g: int, frac: np.ndarray, ctx: np.ndarray, ratio: np.ndarray, noise, idx: np.ndarray) -> np.ndarray:
        bias = (g * 37 % 11 - 5) * 4.0
        plan = self.plan
        spread = 1.0 + plan.gpu_power_bias[self.h, g]
        pc = (P_COMPUTE + bias) * spread * plan.compute_power[idx] * (0.35 + 0.65 * ratio)
        p = P_CTX * (frac[IDLE] + frac[NONE]) + pc * frac[COMPUTE] + P_SPIN * (frac[SPIN] + frac[COMM]) + P_OPT * frac[OPTIM]
        p = np.where(ctx, p, P_IDLE + bias * 0.1)
        return p + noise

    def temps(self) -> np.ndarray:
        """GPU temperature per second of the grid: (G, T) (first-order lag behind power)."""
        if self._temp is not None:
            return self._temp
        plan = self.plan
        secs = plan.grid0 + np.arange(plan.T)
        out = np.empty((self.G, plan.T))
        r = rng(self.cfg.seed, "temp", self.h)
        for g in range(self.G):
            b, c = self._phases[g]
            frac = JobModel.integrals(b, c, secs - 1.0, secs)
            ratio = plan.clock_ratio[self.h, g]
            p = self._power(g, frac, self.ctx(g, secs), ratio, 0.0, np.arange(plan.T))
            tss = 26.5 + (g * 13 % 5) * 0.8 + plan.gpu_temp_bias[self.h, g] + 0.067 * p
            a = 1 - np.exp(-1 / 45.0)
            y, _ = lfilter([a], [1, a - 1], tss, zi=[tss[0] * (1 - a)])
            out[g] = y + r.normal(0, 0.25, plan.T)
            ov = plan.temp_override.get((self.h, g))
            if ov is not None:
                out[g] = np.where(np.isnan(ov), out[g], ov)
        self._temp = out
        return out

    def gpu(self, times: np.ndarray, window: float, key: str) -> dict:
        """GPU state at sample times: dict of (G, n) arrays."""
        plan = self.plan
        n = len(times)
        r = rng(self.cfg.seed, "gpu", key, self.h)
        idx = np.clip((times - plan.grid0).astype(int), 0, plan.T - 1)
        temps = self.temps()
        out = {k: np.zeros((self.G, n)) for k in ("util", "mem_util", "power", "temp", "mem_temp", "sm", "mem_used",
                                                   "pcie_tx", "pcie_rx", "video", "sm_active", "sm_occupancy",
                                                   "tensor_active", "dram_active", "gr_active")}
        out["reasons"] = np.zeros((self.G, n), dtype=np.int64)
        out["ctx"] = np.zeros((self.G, n), dtype=bool)
        out["lost"] = np.zeros((self.G, n), dtype=bool)
        for g in range(self.G):
            b, c = self._phases[g]
            frac = JobModel.integrals(b, c, times - window, times) / window
            busy = frac[COMPUTE] + frac[SPIN] + frac[COMM] + frac[OPTIM]
            ctx = self.ctx(g, times)
            ratio = plan.clock_ratio[self.h, g, idx]
            p = self._power(g, frac, ctx, ratio, r.normal(0, 6.0, n), idx)
            capped = p > P_LIMIT - 6
            p = np.where(capped, P_LIMIT - r.uniform(0.5, 9.0, n), p)
            util = np.clip(np.round(100 * busy + r.normal(0, 0.6, n) * (busy > 0.02)), 0, 100)
            util = np.where(busy < 0.005, 0, util)
            sm = np.floor(SM_MAX * ratio / 15.0) * 15 + plan.gpu_clock_bias[self.h, g]
            sm = np.where(capped, sm - 15 * r.integers(2, 10, n), sm)
            active = ctx & (busy > 0.01)
            sm = np.where(active, sm, SM_IDLE)
            bits = plan.reason_bits[self.h, g, idx].copy()
            bits = np.where(active, bits, bits & ~(R_SW_THERMAL | R_HW_THERMAL | R_HW_SLOW))
            bits = np.where(active, bits, bits | R_IDLE)
            bits = np.where(capped & active, bits | R_SW_POWER, bits)
            temp = temps[g, idx]
            used = np.where(ctx, np.where(times < self.m.t_train, 1180 + g * 3, 74210 + g * 131 + (idx % 97)), 2)
            out["util"][g] = util
            out["mem_util"][g] = np.clip(np.round(100 * (0.42 * frac[COMPUTE] + 0.03 * (frac[SPIN] + frac[COMM])
                                                          + 0.30 * frac[OPTIM])), 0, 100)
            out["power"][g] = np.round(p, 2)
            out["temp"][g] = np.round(temp)
            out["mem_temp"][g] = np.round(temp + 5.5 + 0.009 * p)
            out["sm"][g] = sm
            out["video"][g] = np.where(active, 1545, 765)
            out["reasons"][g] = bits
            out["mem_used"][g] = used
            gdr = 1.0 if plan.gdr else 0.55
            out["pcie_tx"][g] = np.round((frac[COMM] + 0.35 * frac[COMPUTE]) * 21.5e6 * gdr + 465 * ctx)
            out["pcie_rx"][g] = np.round((frac[COMM] + 0.35 * frac[COMPUTE]) * 20.8e6 * gdr + 2600 + 180000 * frac[IDLE] * ctx)
            out["ctx"][g] = ctx
            for k, name in enumerate(("sm_active", "sm_occupancy", "tensor_active", "dram_active")):
                out[name][g] = (ACTIVITY["compute"][k] * frac[COMPUTE] + ACTIVITY["comm"][k] * frac[COMM]
                                + ACTIVITY["spin"][k] * frac[SPIN] + ACTIVITY["optim"][k] * frac[OPTIM]) * ctx
            out["gr_active"][g] = np.clip(busy, 0.0, 1.0) * ctx
        crash = plan.crash
        if crash is not None and crash.gpu_lost:
            for (hh, gg) in crash.dead:
                if hh == self.h:
                    out["lost"][gg] = times >= crash.t_fail
        return out

    def ecc(self, g: int, times: np.ndarray) -> dict:
        ev = sorted(self.plan.ecc.get((self.h, g), []), key=lambda e: e[0])
        n = len(times)
        res = {"dbe": np.zeros(n, dtype=np.int64), "sbe": np.zeros(n, dtype=np.int64), "sbe_agg": np.zeros(n, dtype=np.int64),
               "remap_unc": np.zeros(n, dtype=np.int64), "pending": np.zeros(n, dtype=bool),
               "failure": np.zeros(n, dtype=bool)}
        for t, d in ev:
            after = times >= t
            res["dbe"] += after * d.get("dbe", 0)
            res["sbe"] += after * d.get("sbe", 0)
            res["sbe_agg"] += after * d.get("sbe_agg", 0)
            res["remap_unc"] += after * d.get("remap_unc", 0)
            if d.get("pending"):
                res["pending"] |= after
            if d.get("failure"):
                res["failure"] |= after
        return res

    def lost(self, g: int, times: np.ndarray) -> np.ndarray:
        """True where GPU g has fallen off the bus (it vanishes from nvidia-smi)."""
        crash = self.plan.crash
        if crash is None or not crash.gpu_lost or (self.h, g) not in crash.dead:
            return np.zeros(len(times), dtype=bool)
        return np.asarray(times) >= crash.t_fail

    def nvlink_kib(self, times: np.ndarray) -> np.ndarray:
        """Running NVLink data totals (KiB) at true `times`: (G, NVLINKS, 2 (tx, rx), n) int64.

        The intra-node part of the all-reduce: each rank's ring sends and receives over NVLink
        (through the NVSwitches, spread evenly over its links) about (G - 1) times what its rail NIC
        carries between nodes; on top, what earlier jobs moved since the driver loaded."""
        r = rng(self.cfg.seed, "nvlink", self.h)
        n = len(times)
        out = np.zeros((self.G, NVLINKS, 2, n), dtype=np.int64)
        up = times[0] - self.host.boot_true
        for g in range(self.G):
            sent = self.m.traffic(self.h, g, times) * max(self.G - 1, 0)
            hist = up * r.uniform(0.4e9, 2.5e9)
            for d, jit in enumerate((1.0, r.uniform(0.995, 1.005))):
                w = r.dirichlet(np.full(NVLINKS, 2.0e5))
                tot = (hist * r.uniform(0.99, 1.01) + sent * jit) / 1024.0
                out[g, :, d] = np.floor(w[:, None] * tot[None, :]).astype(np.int64)
        return out

    # ------------------------------------------------------------------ NICs
    def nic_counters(self, nic, times: np.ndarray) -> dict:
        """Cumulative counters of one port at snapshot times (true): {name: int64 array}."""
        plan = self.plan
        cfg = self.cfg
        r = rng(cfg.seed, "nic", self.h, nic.iface)
        up = times - self.host.boot_true
        out: dict[str, np.ndarray] = {}
        secs = plan.grid0 + np.arange(plan.T)
        t_rel = np.clip(times - plan.grid0, 0, plan.T - 1)

        def cum_rate(rate: np.ndarray) -> np.ndarray:
            """Sample the running sum of a per-second rate on the grid at `times`."""
            c = np.concatenate([[0.0], np.cumsum(rate)])
            return np.interp(t_rel, np.arange(plan.T + 1), c)

        kernel_pps = r.uniform(6, 14)
        k_rx = np.floor(up * kernel_pps * r.uniform(0.9, 1.1)).astype(np.int64)
        k_tx = np.floor(up * kernel_pps * r.uniform(0.6, 0.8)).astype(np.int64)
        hist = float(up[0] * r.uniform(1.2e9, 3.5e9))  # bytes of earlier jobs since boot
        if nic.rail is not None:
            factor = plan.nic_traffic.get((self.h, nic.iface))
            tx = self.m.traffic(self.h, nic.rail, times, factor) if plan.transport == "ib" else np.zeros(len(times))
            rx = tx * r.uniform(0.985, 1.015)
        else:
            if plan.transport == "socket":
                tx = sum(self.m.traffic(self.h, g, times) for g in range(self.G)) * 0.5
                rx = tx * r.uniform(0.985, 1.015)
            else:
                tx = np.zeros(len(times))
                rx = np.zeros(len(times))
            hist *= 0.05
        base_tx = hist
        base_rx = hist * r.uniform(0.97, 1.03)
        tx_all = base_tx + tx
        rx_all = base_rx + rx
        out["rx_packets"] = k_rx
        out["rx_bytes"] = k_rx * 96
        out["tx_packets"] = k_tx
        out["tx_bytes"] = k_tx * 82
        out["tx_csum_none"] = k_tx
        out["rx_csum_complete"] = k_rx // 3
        out["rx_csum_none"] = k_rx - k_rx // 3
        out["tx_cqes"] = k_tx
        out["tx_mpwqe_blks"] = k_tx // 2
        out["tx_mpwqe_pkts"] = k_tx
        out["rx_cache_reuse"] = (k_rx * 15) // 16
        out["ch_events"] = k_rx + k_tx
        out["ch_poll"] = k_rx + k_tx
        out["ch_arm"] = k_rx + k_tx - (k_rx // 50)
        if nic.rail is not None or plan.transport == "socket":
            out["rx_vport_rdma_unicast_packets" if plan.transport == "ib" else "rx_vport_unicast_packets"] = (rx_all / FRAME).astype(np.int64)
            out["rx_vport_rdma_unicast_bytes" if plan.transport == "ib" else "rx_vport_unicast_bytes"] = rx_all.astype(np.int64)
            out["tx_vport_rdma_unicast_packets" if plan.transport == "ib" else "tx_vport_unicast_packets"] = (tx_all / FRAME).astype(np.int64)
            out["tx_vport_rdma_unicast_bytes" if plan.transport == "ib" else "tx_vport_unicast_bytes"] = tx_all.astype(np.int64)
        out.setdefault("rx_vport_unicast_packets", k_rx)
        out.setdefault("rx_vport_unicast_bytes", k_rx * 96)
        out.setdefault("tx_vport_unicast_packets", k_tx)
        out.setdefault("tx_vport_unicast_bytes", k_tx * 82)
        out["rx_vport_multicast_packets"] = (up * 0.4).astype(np.int64)
        out["rx_vport_multicast_bytes"] = (up * 0.4).astype(np.int64) * 110
        out["rx_vport_broadcast_packets"] = (up * 0.2).astype(np.int64)
        out["rx_vport_broadcast_bytes"] = (up * 0.2).astype(np.int64) * 64
        out["tx_vport_multicast_packets"] = (up * 0.03).astype(np.int64)
        out["tx_vport_multicast_bytes"] = (up * 0.03).astype(np.int64) * 90
        acks = (rx_all / FRAME / 16).astype(np.int64)
        out["rx_packets_phy"] = (rx_all / FRAME).astype(np.int64) + acks + k_rx
        out["tx_packets_phy"] = (tx_all / FRAME).astype(np.int64) + (tx_all / FRAME / 16).astype(np.int64) + k_tx
        out["rx_bytes_phy"] = rx_all.astype(np.int64) + acks * 64 + k_rx * 100
        out["tx_bytes_phy"] = tx_all.astype(np.int64) + (tx_all / FRAME / 16).astype(np.int64) * 64 + k_tx * 86
        out["rx_multicast_phy"] = out["rx_vport_multicast_packets"]
        out["rx_broadcast_phy"] = out["rx_vport_broadcast_packets"]
        out["tx_multicast_phy"] = out["tx_vport_multicast_packets"]
        out["rx_64_bytes_phy"] = acks + k_rx // 4
        out["rx_65_to_127_bytes_phy"] = k_rx - k_rx // 4
        out["rx_4096_to_8191_bytes_phy"] = (rx_all / FRAME).astype(np.int64)
        # FEC-corrected bits keep rising on a healthy 400G PAM4 link
        fec_rate = r.uniform(800, 6000) if nic.rail is not None else r.uniform(5, 60)
        fec = np.floor(up * fec_rate).astype(np.int64)
        lane_w = r.dirichlet(np.ones(4))
        extra = plan.nic_extra.get((self.h, nic.iface), {})
        for name, rate in extra.items():
            if name.startswith("_"):
                continue
            inc = np.floor(cum_rate(rate)).astype(np.int64)
            out["_extra_" + name] = inc
        fec = fec + out.get("_extra_rx_corrected_bits_phy", 0)
        out["rx_corrected_bits_phy"] = fec
        for lane in range(4):
            out[f"rx_err_lane_{lane}_phy"] = np.floor(fec * lane_w[lane]).astype(np.int64)
        sym = int(r.integers(0, 40)) + out.get("_extra_rx_symbol_err_phy", 0)
        out["rx_symbol_err_phy"] = np.zeros(len(times), dtype=np.int64) + sym
        out["rx_pcs_symbol_err_phy"] = out["rx_symbol_err_phy"]
        out["rx_crc_errors_phy"] = np.zeros(len(times), dtype=np.int64) + int(r.integers(0, 3)) + out.get("_extra_rx_crc_errors_phy", 0)
        flaps = np.zeros(len(times), dtype=np.int64)
        for t_down, _t_up in plan.link_down.get((self.h, nic.iface), []):
            flaps += times >= t_down
        out["link_down_events_phy"] = flaps + 1
        # a steady trickle on some frontend ports since boot (confounders)
        oob_rate, disc_rate = plan.frontend_trickle.get(self.h, (0.0, 0.0)) if nic.rail is None else (0.0, 0.0)
        out["rx_discards_phy"] = (np.floor(up * disc_rate).astype(np.int64) + out.get("_extra_rx_discards_phy", 0))
        out["rx_out_of_buffer"] = (np.floor(up * oob_rate).astype(np.int64) + int(r.integers(0, 30))
                                   + out.get("_extra_rx_out_of_buffer", 0))
        out["rx_steer_missed_packets"] = (up * r.uniform(0.1, 0.3)).astype(np.int64)
        if nic.rail is not None:
            # per-second traffic on the grid for pause counters
            per_sec = np.diff(np.concatenate([[0.0], self.m.traffic(self.h, nic.rail, secs, plan.nic_traffic.get((self.h, nic.iface)))]))
            if plan.transport != "ib":
                per_sec = per_sec * 0
            gb = per_sec / 1e9
            # pauses per GB carried and microseconds per pause: normal congestion (confounders) or a quiet fabric
            per_gb, us = plan.pause_level.get((self.h, nic.iface), (0.6, 11.0))
            rx_p = r.poisson(np.clip(gb * per_gb, 0, None))
            tx_p = r.poisson(np.clip(gb * per_gb * 0.25, 0, None))
            lo, hi = (3.0, 25.0) if (self.h, nic.iface) not in plan.pause_level else (0.2 * us, 1.8 * us)
            rx_d = rx_p * r.uniform(lo, hi, plan.T)
            tx_d = tx_p * r.uniform(lo, hi, plan.T)
            marked = r.poisson(np.clip(gb * 180, 0, None))
            base_rxp = int(hist / 1e9 * per_gb)
            base_txp = int(hist / 1e9 * per_gb * 0.25)
            rxp = base_rxp + np.floor(cum_rate(rx_p)).astype(np.int64) + out.get("_extra_rx_prio3_pause", 0)
            txp = base_txp + np.floor(cum_rate(tx_p)).astype(np.int64) + out.get("_extra_tx_prio3_pause", 0)
            out["rx_prio3_pause"] = rxp
            out["tx_prio3_pause"] = txp
            out["rx_prio3_pause_duration"] = (round(base_rxp * us) + np.floor(cum_rate(rx_d)).astype(np.int64)
                                              + out.get("_extra_rx_prio3_pause_duration", 0))
            out["tx_prio3_pause_duration"] = (round(base_txp * us) + np.floor(cum_rate(tx_d)).astype(np.int64)
                                              + out.get("_extra_tx_prio3_pause_duration", 0))
            out["rx_prio3_pause_transition"] = rxp // 2
            out["tx_mac_control_phy"] = txp
            out["rx_mac_control_phy"] = rxp
            out["tx_pause_storm_warning_events"] = np.zeros(len(times), dtype=np.int64) + out.get("_extra_tx_pause_storm_warning_events", 0)
            out["tx_pause_storm_error_events"] = np.zeros(len(times), dtype=np.int64) + out.get("_extra_tx_pause_storm_error_events", 0)
            out["rx_prio3_marked"] = int(hist / 1e9 * 180) + np.floor(cum_rate(marked)).astype(np.int64) + out.get("_extra_rx_prio3_marked", 0)
            out["rx_prio3_bytes"] = rx_all.astype(np.int64)
            out["rx_prio3_packets"] = (rx_all / FRAME).astype(np.int64) + acks
            out["tx_prio3_bytes"] = tx_all.astype(np.int64)
            out["tx_prio3_packets"] = (tx_all / FRAME).astype(np.int64) + (tx_all / FRAME / 16).astype(np.int64)
            out["rx_prio3_discards"] = out["rx_discards_phy"]
            out["rx_prio3_buf_discard"] = out["rx_discards_phy"]
        out["rx_prio0_bytes"] = k_rx * 100 + (0 if nic.rail is not None else rx_all.astype(np.int64))
        out["rx_prio0_packets"] = k_rx + (0 if nic.rail is not None else (rx_all / FRAME).astype(np.int64))
        out["tx_prio0_bytes"] = k_tx * 86 + (0 if nic.rail is not None else tx_all.astype(np.int64))
        out["tx_prio0_packets"] = k_tx + (0 if nic.rail is not None else (tx_all / FRAME).astype(np.int64))
        if nic.rail is None:
            gp = (up * 0.002).astype(np.int64)
            out["rx_global_pause"] = gp
            out["rx_global_pause_duration"] = gp * 7
            out["rx_global_pause_transition"] = gp // 2
            out["tx_global_pause"] = np.zeros(len(times), dtype=np.int64)
            out["tx_global_pause_duration"] = np.zeros(len(times), dtype=np.int64)
            out["tx_mac_control_phy"] = np.zeros(len(times), dtype=np.int64)
            out["rx_mac_control_phy"] = gp
            out["rx_pause_ctrl_phy"] = gp
            out["tx_pause_storm_warning_events"] = np.zeros(len(times), dtype=np.int64)
            out["tx_pause_storm_error_events"] = np.zeros(len(times), dtype=np.int64)
        for k in list(out):
            if k.startswith("_extra_"):
                del out[k]
            else:
                out[k] = np.asarray(out[k], dtype=np.int64)
        return out

    # ------------------------------------------------------------------ host
    def cpu(self, times: np.ndarray, window: float) -> dict:
        """Per-NUMA-node CPU shares (percent of that node's CPUs) over windows ending at `times`."""
        plan = self.plan
        idx = np.clip((times - plan.grid0).astype(int), 0, plan.T - 1)
        r = rng(self.cfg.seed, "cpu", self.h, len(times), window)
        busy = np.zeros((2, len(times)))
        ncpu_node = NCPU // 2
        nodes = [plan.affinity.get((self.h, g), gpu.numa) for g, gpu in enumerate(self.host.gpus)]
        extra = plan.cpu_extra[self.h, idx]
        for g, node in enumerate(nodes):
            live = self.ctx(g, times) & (times >= self.m.t_launch)
            training = live & (times >= self.m.t_train)
            normal = 1.35 + 8 * 0.33
            # a starving dataloader grows its workers until the socket's CPUs are all busy
            full = 0.97 * ncpu_node / max(1, nodes.count(node))
            per = np.where(training, normal + extra * max(full - normal, 0.0), np.where(live, 1.1, 0.0))
            busy[node] += per * r.uniform(0.96, 1.04, len(times))
        share = busy / ncpu_node * 100
        share[0] += plan.cpu_points[self.h, idx]  # rank 0's extra work, checkpoint serialisation
        user = np.clip(share * 0.9 + r.uniform(0.3, 0.8, (2, len(times))), 0, 99.5)
        system = np.clip(share * 0.08 + r.uniform(0.4, 0.9, (2, len(times))), 0, 100)
        load = plan.disk_load[self.h, idx] * (self.m.alive(self.h, times) > 0)  # the dataloader dies with the job
        iowait = np.clip(load * r.uniform(2.0, 4.5, len(times)) + r.uniform(0.0, 0.05, len(times)), 0, 100)
        iowait = np.broadcast_to(iowait, (2, len(times))).copy()
        over = user + system + iowait
        scale = np.where(over > 99.7, 99.7 / over, 1.0)
        user, system, iowait = user * scale, system * scale, iowait * scale
        return {"user": user, "system": system, "iowait": iowait, "nice": np.zeros_like(user)}

    def per_cpu(self, times: np.ndarray, window: float) -> np.ndarray:
        """(NCPU, n, 4) user/nice/system/iowait percentages for each CPU."""
        nodes = self.cpu(times, window)
        r = rng(self.cfg.seed, "percpu", self.h, len(times))
        out = np.zeros((NCPU, len(times), 4))
        for node in (0, 1):
            cpus = np.array(node_cpus(node))
            total_user = nodes["user"][node] * len(cpus)      # percent-CPUs
            total_sys = nodes["system"][node] * len(cpus)
            w = r.gamma(0.35, 1.0, (len(cpus), len(times)))
            w = w / w.sum(axis=0, keepdims=True)
            u = np.minimum(total_user[None, :] * w, 100.0)
            # what does not fit under 100% on a CPU spreads evenly over the others
            spill = total_user - u.sum(axis=0)
            u = np.minimum(u + spill[None, :] / len(cpus), 100.0)
            s = np.minimum(total_sys[None, :] * (0.6 * w + 0.4 / len(cpus)), 100.0 - u)
            io = np.minimum(np.broadcast_to(nodes["iowait"][node], u.shape) * r.uniform(0.5, 1.5, u.shape), 100.0 - u - s)
            out[cpus, :, 0] = u
            out[cpus, :, 2] = s
            out[cpus, :, 3] = np.maximum(io, 0)
        return out

    def disks(self, times: np.ndarray) -> dict:
        """Per device rates over the window ending at each time: dict dev -> dict of arrays."""
        plan = self.plan
        idx = np.clip((times - plan.grid0).astype(int), 0, plan.T - 1)
        r = rng(self.cfg.seed, "disk", self.h, len(times))
        n = len(times)
        live = self.m.alive(self.h, times) > 0
        load = plan.disk_load[self.h, idx] * live  # the dataloader's reads stop when the job's processes die
        devs = {}
        rate = np.where(live, r.uniform(28000, 52000, n), r.uniform(0, 200, n)) * (1 - load) + load * r.uniform(478000, 512000, n)
        rsz = np.where(load > 0.5, r.uniform(124, 128, n), r.uniform(96, 128, n))
        rs = rate / rsz
        r_await = 0.55 + 0.4 * r.random(n) + load ** 3 * r.uniform(22, 58, n)
        util = np.clip(np.where(rs > 0.5, 9 + rs / 40 + load * 90 + r.uniform(-1, 1, n), 0.0), 0, 100)
        util = np.where(load > 0.8, np.minimum(99.0 + r.uniform(0, 1, n), 100.0), util)
        devs["sda"] = {"r_s": rs, "rkb_s": rate, "rareq": np.where(rs > 0, rsz, 0), "r_await": np.where(rs > 0, r_await, 0),
                       "rrqm_s": rs * r.uniform(0.0, 0.03, n), "w_s": r.uniform(0, 0.4, n), "wkb_s": r.uniform(0, 6, n),
                       "w_await": r.uniform(0.2, 1.2, n), "aqu": rs * r_await / 1000.0, "util": util}
        w = r.uniform(4, 22, n)
        ckpt = plan.ckpt_write[self.h, idx]  # checkpoint bursts (kB/s): 512 kB writes, a few ms each
        devs["nvme0n1"] = {"r_s": r.uniform(0, 2, n), "rkb_s": r.uniform(0, 40, n), "rareq": r.uniform(4, 32, n),
                           "r_await": r.uniform(0.05, 0.2, n), "rrqm_s": np.zeros(n), "w_s": w,
                           "wkb_s": w * r.uniform(8, 40, n), "w_await": r.uniform(0.01, 0.05, n),
                           "aqu": r.uniform(0, 0.01, n), "util": r.uniform(0.1, 0.8, n), "f_s": r.uniform(0, 1.5, n)}
        if ckpt.any():
            d = devs["nvme0n1"]
            burst = ckpt > 0
            d["w_s"] = w + ckpt / 512.0
            d["wkb_s"] = d["wkb_s"] + ckpt
            d["w_await"] = np.where(burst, rng(self.cfg.seed, "ckpt", self.h, n).uniform(2.0, 9.0, n), d["w_await"])
            d["util"] = np.where(burst, 80.0 + 19.0 * np.minimum(ckpt / 3.0e6, 1.0), d["util"])
            d["aqu"] = np.where(burst, d["w_s"] * d["w_await"] / 1000.0, d["aqu"])
        w2 = np.where(live, r.uniform(0, 3, n), 0)
        devs["nvme1n1"] = {"r_s": np.zeros(n), "rkb_s": np.zeros(n), "rareq": np.zeros(n), "r_await": np.zeros(n),
                           "rrqm_s": np.zeros(n), "w_s": w2, "wkb_s": w2 * 128, "w_await": r.uniform(0.01, 0.04, n),
                           "aqu": np.zeros(n), "util": w2 * 0.05}
        return devs
