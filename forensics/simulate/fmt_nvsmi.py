"""nvidia-smi outputs of an HGX H100 node on driver 545: ``-q`` snapshots, one ``-q -x``, the
``--query-gpu=... --format=csv -lms N`` series, ``topo -m`` and ``nvlink -gt d`` snapshots.

The ``-q`` layout (field names, indentation, "Clocks Event Reasons", T.Limit temperatures, "GPU
Memory Power Readings " with its trailing space) is the H100 / 545.23.08 output in
tests/fixtures/nvidia_smi (Princeton della-j11g1); the XML follows the nvsmi_device_v12 documents
of the telegraf fixtures; ``topo -m`` the della 8 x H100 matrix with its NIC legend; ``nvlink -gt d``
the driver's layout of tests/fixtures/nvidia_smi/nvidia_smi--nvlink-gt-d-* (``GPU i: <name> (UUID:
...)``, then ``\\t Link k: Data Tx: N KiB`` and ``Data Rx`` per link, a tab and a space before "Link").
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from forensics.layout import format_marker
from forensics.simulate import textfmt as tf
from forensics.simulate.config import CUDA, DRIVER
from forensics.simulate.hardware import cpu_list_str
from forensics.simulate.series import (MEM_CLOCK, MEM_TOTAL, NVLINKS, P_LIMIT, R_APP, R_HW_BRAKE, R_HW_SLOW,
                                       R_HW_THERMAL, R_IDLE, R_SW_POWER, R_SW_THERMAL, R_SYNC, SM_MAX)

T_LIMIT = 87  # C at which "GPU T.Limit Temp" reaches 0
PRODUCT = "NVIDIA H100 80GB HBM3"

# how each field of the collector's --query-gpu list prints: unit of the header, then the value pieces
# (F/I/S specs of tf.lines over the columns of query_csv, and literals)
CSV_COLUMNS = {
    "timestamp": (None, [tf.S("ts")]), "index": (None, [tf.S("idx")]), "uuid": (None, [tf.S("uuid")]),
    "pci.bus_id": (None, [tf.S("pci")]), "utilization.gpu": ("%", [tf.I("util"), " %"]),
    "utilization.memory": ("%", [tf.I("mu"), " %"]), "temperature.gpu": (None, [tf.I("t")]),
    "temperature.memory": (None, [tf.I("mt")]), "power.draw": ("W", [tf.F("p", 2), " W"]),
    "power.limit": ("W", [f"{P_LIMIT:.2f} W"]), "clocks.sm": ("MHz", [tf.I("sm"), " MHz"]),
    "clocks.gr": ("MHz", [tf.I("sm"), " MHz"]), "clocks.mem": ("MHz", [f"{MEM_CLOCK} MHz"]),
    "clocks.max.sm": ("MHz", [f"{SM_MAX} MHz"]), "pstate": (None, ["P0"]),
    "memory.used": ("MiB", [tf.I("mem"), " MiB"]), "memory.total": ("MiB", [f"{MEM_TOTAL} MiB"]),
    "pcie.link.gen.current": (None, ["5"]), "pcie.link.width.current": (None, ["16"]),
    "clocks_event_reasons.active": (None, [tf.S("rb")]), "clocks_throttle_reasons.active": (None, [tf.S("rb")]),
    "ecc.errors.uncorrected.volatile.total": (None, [tf.I("dbe")]),
}


def csv_argv(interval: float) -> list[str]:
    """The collector's `nvidia-smi --query-gpu=... --format=csv -lms N` for this sampling interval."""
    from forensics.collect.main import fill, stream_values
    from forensics.collect.specs import by_name

    spec = by_name()["nvidia_smi_query_gpu"]
    return fill(spec.argv, **stream_values(spec, interval, 1))


def csv_fields(argv: list[str]) -> list[str]:
    q = [a for a in argv if a.startswith("--query-gpu=")][0]
    return q[len("--query-gpu="):].split(",")


def query_csv(host, hm, times: np.ndarray, interval: float) -> bytes:
    """The -lms loop: one row per GPU per iteration; a GPU that fell off the bus disappears. Columns in
    the order of the collector's field list; a field the model does not know prints ``[N/A]``."""
    st = hm.gpu(times, min(interval, 1.0), "csv")
    n = len(times)
    G = hm.G
    # nvidia-smi takes a few ms per GPU; all GPUs of an iteration share the second
    r = np.random.default_rng([hm.cfg.seed, host.index, 7])
    base = times + host.offset_s + r.uniform(0.003, 0.030, n)
    fields = csv_fields(csv_argv(interval))
    cols = [CSV_COLUMNS.get(f, (None, ["[N/A]"])) for f in fields]
    head = ", ".join(f if u is None else f"{f} [{u}]" for f, (u, _) in zip(fields, cols))
    keep = ~st["lost"].T.reshape(-1)                       # iteration-major: (i, g)
    flat = lambda a: np.asarray(a).T.reshape(-1)           # noqa: E731  (G, n) -> n*G rows, iteration-major
    stamps = tf.times((base[:, None] + 0.0011 * np.arange(G)[None, :]).reshape(-1), host.tz,
                      "%Y/%m/%d %H:%M:%S%.3f")
    data = {"ts": stamps, "idx": [str(g) for g in range(G)] * n, "uuid": [gp.uuid for gp in host.gpus] * n,
            "pci": [gp.pci for gp in host.gpus] * n, "util": flat(st["util"]), "mu": flat(st["mem_util"]),
            "t": flat(st["temp"]), "p": flat(st["power"]), "sm": flat(st["sm"]),
            "rb": [f"0x{int(x):016x}" for x in flat(st["reasons"]).tolist()], "mt": flat(st["mem_temp"]),
            "mem": flat(st["mem_used"])}
    if "ecc.errors.uncorrected.volatile.total" in fields:
        data["dbe"] = flat(np.stack([hm.ecc(g, times)["dbe"] for g in range(G)]))
    pieces: list = []
    for k, (_, value) in enumerate(cols):
        pieces += ([", "] if k else []) + list(value)
    rows = tf.lines(data, pieces).filter(pl.Series(keep))
    return tf.lines_bytes(pl.concat([pl.Series([head]), rows]))


def _reason(bits: int, flag: int) -> str:
    return "Active" if bits & flag else "Not Active"


def _gpu_block(gpu, s: dict, g: int, i: int, ecc: dict, proc: tuple | None) -> str:
    util = int(s["util"][g][i])
    mem_util = int(s["mem_util"][g][i])
    temp = int(s["temp"][g][i])
    mtemp = int(s["mem_temp"][g][i])
    power = s["power"][g][i]
    sm = int(s["sm"][g][i])
    video = int(s["video"][g][i])
    bits = int(s["reasons"][g][i])
    used = int(s["mem_used"][g][i])
    reserved = 328
    bar1 = 1 if used < 100 else 115
    volt = 670.0 if sm <= 400 else 880.0 + (sm - 1200) / 780 * 120
    dbe, sbe = int(ecc["dbe"][i]), int(ecc["sbe"][i])
    unc = int(ecc["remap_unc"][i])
    pending = "Yes" if ecc["pending"][i] else "No"
    failure = "Yes" if ecc["failure"][i] else "No"
    mem_power = 47.78 if used < 100 else 81.0 + 0.11 * (power - 100)
    if proc is None:
        procs = "    Processes                             : None"
    else:
        pid, name, mem = proc
        procs = ("    Processes\n"
                 "        GPU instance ID                   : N/A\n"
                 "        Compute instance ID               : N/A\n"
                 f"        Process ID                        : {pid}\n"
                 "            Type                          : C\n"
                 f"            Name                          : {name}\n"
                 f"            Used GPU Memory               : {mem} MiB")
    return f"""GPU {gpu.pci}
    Product Name                          : NVIDIA H100 80GB HBM3
    Product Brand                         : NVIDIA
    Product Architecture                  : Hopper
    Display Mode                          : Enabled
    Display Active                        : Disabled
    Persistence Mode                      : Enabled
    Addressing Mode                       : None
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : {gpu.serial}
    GPU UUID                              : {gpu.uuid}
    Minor Number                          : {gpu.index}
    VBIOS Version                         : 96.00.74.00.0D
    MultiGPU Board                        : No
    Board ID                              : 0x{gpu.bus:x}00
    Board Part Number                     : 692-2G520-0200-000
    GPU Part Number                       : 2330-885-A1
    FRU Part Number                       : N/A
    Module ID                             : {gpu.module_id}
    Inforom Version
        Image Version                     : G520.0200.00.05
        OEM Object                        : 2.1
        ECC Object                        : 7.16
        Power Management Object           : N/A
    Inforom BBX Object Flush
        Latest Timestamp                  : 2026/11/29 13:09:29.459
        Latest Duration                   : 119019 us
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
    GSP Firmware Version                  : N/A
    GPU C2C Mode                          : Disabled
    GPU Virtualization Mode
        Virtualization Mode               : None
        Host VGPU Mode                    : N/A
    GPU Reset Status
        Reset Required                    : {"Yes" if pending == "Yes" else "No"}
        Drain and Reset Recommended       : No
    IBMNPU
        Relaxed Ordering Mode             : N/A
    PCI
        Bus                               : 0x{gpu.bus:02X}
        Device                            : 0x00
        Domain                            : 0x0000
        Device Id                         : 0x233010DE
        Bus Id                            : {gpu.pci}
        Sub System Id                     : 0x16C110DE
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 5
                Device Current            : 5
                Device Max                : 5
                Host Max                  : 5
            Link Width
                Max                       : 16x
                Current                   : 16x
        Bridge Chip
            Type                          : N/A
            Firmware                      : N/A
        Replays Since Reset               : 0
        Replay Number Rollovers           : 0
        Tx Throughput                     : {int(s["pcie_tx"][g][i])} KB/s
        Rx Throughput                     : {int(s["pcie_rx"][g][i])} KB/s
        Atomic Caps Inbound               : N/A
        Atomic Caps Outbound              : FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 
    Fan Speed                             : N/A
    Performance State                     : P0
    Clocks Event Reasons
        Idle                              : {_reason(bits, R_IDLE)}
        Applications Clocks Setting       : {_reason(bits, R_APP)}
        SW Power Cap                      : {_reason(bits, R_SW_POWER)}
        HW Slowdown                       : {_reason(bits, R_HW_SLOW)}
            HW Thermal Slowdown           : {_reason(bits, R_HW_THERMAL)}
            HW Power Brake Slowdown       : {_reason(bits, R_HW_BRAKE)}
        Sync Boost                        : {_reason(bits, R_SYNC)}
        SW Thermal Slowdown               : {_reason(bits, R_SW_THERMAL)}
        Display Clock Setting             : Not Active
    FB Memory Usage
        Total                             : {MEM_TOTAL} MiB
        Reserved                          : {reserved} MiB
        Used                              : {used} MiB
        Free                              : {MEM_TOTAL - reserved - used} MiB
    BAR1 Memory Usage
        Total                             : 131072 MiB
        Used                              : {bar1} MiB
        Free                              : {131072 - bar1} MiB
    Conf Compute Protected Memory Usage
        Total                             : 0 MiB
        Used                              : 0 MiB
        Free                              : 0 MiB
    Compute Mode                          : Default
    Utilization
        Gpu                               : {util} %
        Memory                            : {mem_util} %
        Encoder                           : 0 %
        Decoder                           : 0 %
        JPEG                              : 0 %
        OFA                               : 0 %
    Encoder Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    FBC Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : {sbe}
            DRAM Uncorrectable            : {dbe}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : {sbe}
            DRAM Uncorrectable            : {dbe}
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : {unc}
        Pending                           : {pending}
        Remapping Failure Occurred        : {failure}
        Bank Remap Availability Histogram
            Max                           : {2560 - min(unc, 1)} bank(s)
            High                          : {min(unc, 1)} bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : {temp} C
        GPU T.Limit Temp                  : {T_LIMIT - temp} C
        GPU Shutdown T.Limit Temp         : -8 C
        GPU Slowdown T.Limit Temp         : -2 C
        GPU Max Operating T.Limit Temp    : 0 C
        GPU Target Temperature            : N/A
        Memory Current Temp               : {mtemp} C
        Memory Max Operating T.Limit Temp : 0 C
    GPU Power Readings
        Power Draw                        : {power:.2f} W
        Current Power Limit               : {P_LIMIT:.2f} W
        Requested Power Limit             : {P_LIMIT:.2f} W
        Default Power Limit               : {P_LIMIT:.2f} W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : {P_LIMIT:.2f} W
    GPU Memory Power Readings 
        Power Draw                        : {mem_power:.2f} W
    Module Power Readings
        Power Draw                        : N/A
        Current Power Limit               : N/A
        Requested Power Limit             : N/A
        Default Power Limit               : N/A
        Min Power Limit                   : N/A
        Max Power Limit                   : N/A
    Clocks
        Graphics                          : {sm} MHz
        SM                                : {sm} MHz
        Memory                            : {MEM_CLOCK} MHz
        Video                             : {video} MHz
    Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Default Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Deferred Clocks
        Memory                            : N/A
    Max Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
        Video                             : 1545 MHz
    Max Customer Boost Clocks
        Graphics                          : 1980 MHz
    Clock Policy
        Auto Boost                        : N/A
        Auto Boost Default                : N/A
    Voltage
        Graphics                          : {volt:.3f} mV
    Fabric
        State                             : Completed
        Status                            : Success
{procs}"""


def _proc(host, hm, g: int, i: int, s: dict):
    if not s["ctx"][g][i]:
        return None
    return (host.pid(g), "/usr/bin/python3", max(int(s["mem_used"][g][i]) - 520, 1))


def q_snapshots(host, hm, times: np.ndarray) -> bytes:
    s = hm.gpu(times, 1.0, "q")
    eccs = [hm.ecc(g, times) for g in range(hm.G)]
    stamps = tf.times(times + host.offset_s, host.tz, "%a %b %e %H:%M:%S %Y").to_list()
    out = []
    for i, t in enumerate(times):
        ts = dt.datetime.fromtimestamp(round(float(t + host.offset_s), 6), dt.timezone.utc)
        out.append(format_marker(ts, "nvidia-smi -q"))
        out.append("")
        out.append("==============NVSMI LOG==============")
        out.append("")
        out.append(f"Timestamp                                 : {stamps[i]}")
        out.append(f"Driver Version                            : {DRIVER}")
        out.append(f"CUDA Version                              : {CUDA}")
        out.append("")
        out.append(f"Attached GPUs                             : {len(host.gpus)}")
        blocks = [_gpu_block(gpu, s, g, i, eccs[g], _proc(host, hm, g, i, s))
                  for g, gpu in enumerate(host.gpus) if not s["lost"][g][i]]
        out.append("\n\n".join(blocks))
    return ("\n".join(out) + "\n").encode()


def nvlink_snapshots(host, hm, times: np.ndarray, argv: str) -> bytes:
    """`nvidia-smi nvlink -gt d` at true `times`, each output preceded by the collector's marker line.
    A GPU that fell off the bus is no longer listed (as in ``-q``); a sample with no GPU left wrote
    nothing, and the collector keeps no marker for an empty output."""
    kib = hm.nvlink_kib(times)
    lost = [hm.lost(g, times) for g in range(hm.G)]
    body = "".join(f"\t Link {k}: Data Tx: %d KiB\n\t Link {k}: Data Rx: %d KiB\n" for k in range(NVLINKS))
    tmpl = [f"GPU {gpu.index}: {PRODUCT} (UUID: {gpu.uuid})\n" + body for gpu in host.gpus]
    rows = [kib[g].transpose(2, 0, 1).reshape(len(times), -1).tolist() for g in range(hm.G)]
    out = []
    for i, t in enumerate(times):
        gpus = [tmpl[g] % tuple(rows[g][i]) for g in range(hm.G) if not lost[g][i]]
        if gpus:
            ts = dt.datetime.fromtimestamp(round(float(t + host.offset_s), 6), dt.timezone.utc)
            out.append(format_marker(ts, argv) + "\n")
            out.extend(gpus)
    return "".join(out).encode()


def q_xml(host, hm, t: float) -> bytes:
    times = np.array([t])
    s = hm.gpu(times, 1.0, "x")
    stamp = tf.times(times + host.offset_s, host.tz, "%a %b %e %H:%M:%S %Y")[0]
    parts = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">', "<nvidia_smi_log>",
             f"\t<timestamp>{stamp}</timestamp>", f"\t<driver_version>{DRIVER}</driver_version>",
             f"\t<cuda_version>{CUDA}</cuda_version>", f"\t<attached_gpus>{len(host.gpus)}</attached_gpus>"]
    clocks = [f"\t\t\t\t<supported_graphics_clock>{c} MHz</supported_graphics_clock>" for c in range(1980, 344, -15)]
    for g, gpu in enumerate(host.gpus):
        ecc = hm.ecc(g, times)
        bits = int(s["reasons"][g][0])
        used = int(s["mem_used"][g][0])
        p = _proc(host, hm, g, 0, s)
        if p is None:
            procs = "\t\t<processes>\n\t\t</processes>"
        else:
            procs = ("\t\t<processes>\n\t\t\t<process_info>\n\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>\n"
                     "\t\t\t\t<compute_instance_id>N/A</compute_instance_id>\n"
                     f"\t\t\t\t<pid>{p[0]}</pid>\n\t\t\t\t<type>C</type>\n\t\t\t\t<process_name>{p[1]}</process_name>\n"
                     f"\t\t\t\t<used_memory>{p[2]} MiB</used_memory>\n\t\t\t</process_info>\n\t\t</processes>")

        def rs(flag):
            return _reason(bits, flag)
        temp = int(s["temp"][g][0])
        parts.append(f"""	<gpu id="{gpu.pci}">
		<product_name>NVIDIA H100 80GB HBM3</product_name>
		<product_brand>NVIDIA</product_brand>
		<product_architecture>Hopper</product_architecture>
		<display_mode>Enabled</display_mode>
		<display_active>Disabled</display_active>
		<persistence_mode>Enabled</persistence_mode>
		<addressing_mode>None</addressing_mode>
		<mig_mode>
			<current_mig>Disabled</current_mig>
			<pending_mig>Disabled</pending_mig>
		</mig_mode>
		<mig_devices>
			None
		</mig_devices>
		<accounting_mode>Disabled</accounting_mode>
		<accounting_mode_buffer_size>4000</accounting_mode_buffer_size>
		<driver_model>
			<current_dm>N/A</current_dm>
			<pending_dm>N/A</pending_dm>
		</driver_model>
		<serial>{gpu.serial}</serial>
		<uuid>{gpu.uuid}</uuid>
		<minor_number>{gpu.index}</minor_number>
		<vbios_version>96.00.74.00.0D</vbios_version>
		<multigpu_board>No</multigpu_board>
		<board_id>0x{gpu.bus:x}00</board_id>
		<board_part_number>692-2G520-0200-000</board_part_number>
		<gpu_part_number>2330-885-A1</gpu_part_number>
		<gpu_fru_part_number>N/A</gpu_fru_part_number>
		<gpu_module_id>{gpu.module_id}</gpu_module_id>
		<inforom_version>
			<img_version>G520.0200.00.05</img_version>
			<oem_object>2.1</oem_object>
			<ecc_object>7.16</ecc_object>
			<pwr_object>N/A</pwr_object>
		</inforom_version>
		<gpu_operation_mode>
			<current_gom>N/A</current_gom>
			<pending_gom>N/A</pending_gom>
		</gpu_operation_mode>
		<gsp_firmware_version>N/A</gsp_firmware_version>
		<gpu_virtualization_mode>
			<virtualization_mode>None</virtualization_mode>
			<host_vgpu_mode>N/A</host_vgpu_mode>
		</gpu_virtualization_mode>
		<gpu_reset_status>
			<reset_required>No</reset_required>
			<drain_and_reset_recommended>No</drain_and_reset_recommended>
		</gpu_reset_status>
		<ibmnpu>
			<relaxed_ordering_mode>N/A</relaxed_ordering_mode>
		</ibmnpu>
		<pci>
			<pci_bus>{gpu.bus:02X}</pci_bus>
			<pci_device>00</pci_device>
			<pci_domain>0000</pci_domain>
			<pci_device_id>233010DE</pci_device_id>
			<pci_bus_id>{gpu.pci}</pci_bus_id>
			<pci_sub_system_id>16C110DE</pci_sub_system_id>
			<pci_gpu_link_info>
				<pcie_gen>
					<max_link_gen>5</max_link_gen>
					<current_link_gen>5</current_link_gen>
					<device_current_link_gen>5</device_current_link_gen>
					<max_device_link_gen>5</max_device_link_gen>
					<max_host_link_gen>5</max_host_link_gen>
				</pcie_gen>
				<link_widths>
					<max_link_width>16x</max_link_width>
					<current_link_width>16x</current_link_width>
				</link_widths>
			</pci_gpu_link_info>
			<pci_bridge_chip>
				<bridge_chip_type>N/A</bridge_chip_type>
				<bridge_chip_fw>N/A</bridge_chip_fw>
			</pci_bridge_chip>
			<replay_counter>0</replay_counter>
			<replay_rollover_counter>0</replay_rollover_counter>
			<tx_util>{int(s["pcie_tx"][g][0])} KB/s</tx_util>
			<rx_util>{int(s["pcie_rx"][g][0])} KB/s</rx_util>
			<atomic_caps_inbound>N/A</atomic_caps_inbound>
			<atomic_caps_outbound>FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 </atomic_caps_outbound>
		</pci>
		<fan_speed>N/A</fan_speed>
		<performance_state>P0</performance_state>
		<clocks_event_reasons>
			<clocks_event_reason_gpu_idle>{rs(R_IDLE)}</clocks_event_reason_gpu_idle>
			<clocks_event_reason_applications_clocks_setting>{rs(R_APP)}</clocks_event_reason_applications_clocks_setting>
			<clocks_event_reason_sw_power_cap>{rs(R_SW_POWER)}</clocks_event_reason_sw_power_cap>
			<clocks_event_reason_hw_slowdown>{rs(R_HW_SLOW)}</clocks_event_reason_hw_slowdown>
			<clocks_event_reason_hw_thermal_slowdown>{rs(R_HW_THERMAL)}</clocks_event_reason_hw_thermal_slowdown>
			<clocks_event_reason_hw_power_brake_slowdown>{rs(R_HW_BRAKE)}</clocks_event_reason_hw_power_brake_slowdown>
			<clocks_event_reason_sync_boost>{rs(R_SYNC)}</clocks_event_reason_sync_boost>
			<clocks_event_reason_sw_thermal_slowdown>{rs(R_SW_THERMAL)}</clocks_event_reason_sw_thermal_slowdown>
			<clocks_event_reason_display_clocks_setting>Not Active</clocks_event_reason_display_clocks_setting>
		</clocks_event_reasons>
		<fb_memory_usage>
			<total>{MEM_TOTAL} MiB</total>
			<reserved>328 MiB</reserved>
			<used>{used} MiB</used>
			<free>{MEM_TOTAL - 328 - used} MiB</free>
		</fb_memory_usage>
		<bar1_memory_usage>
			<total>131072 MiB</total>
			<used>1 MiB</used>
			<free>131071 MiB</free>
		</bar1_memory_usage>
		<cc_protected_memory_usage>
			<total>0 MiB</total>
			<used>0 MiB</used>
			<free>0 MiB</free>
		</cc_protected_memory_usage>
		<compute_mode>Default</compute_mode>
		<utilization>
			<gpu_util>{int(s["util"][g][0])} %</gpu_util>
			<memory_util>{int(s["mem_util"][g][0])} %</memory_util>
			<encoder_util>0 %</encoder_util>
			<decoder_util>0 %</decoder_util>
			<jpeg_util>0 %</jpeg_util>
			<ofa_util>0 %</ofa_util>
		</utilization>
		<encoder_stats>
			<session_count>0</session_count>
			<average_fps>0</average_fps>
			<average_latency>0</average_latency>
		</encoder_stats>
		<fbc_stats>
			<session_count>0</session_count>
			<average_fps>0</average_fps>
			<average_latency>0</average_latency>
		</fbc_stats>
		<ecc_mode>
			<current_ecc>Enabled</current_ecc>
			<pending_ecc>Enabled</pending_ecc>
		</ecc_mode>
		<ecc_errors>
			<volatile>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>{int(ecc["sbe"][0])}</dram_correctable>
				<dram_uncorrectable>{int(ecc["dbe"][0])}</dram_uncorrectable>
			</volatile>
			<aggregate>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>{int(ecc["sbe"][0])}</dram_correctable>
				<dram_uncorrectable>{int(ecc["dbe"][0])}</dram_uncorrectable>
			</aggregate>
		</ecc_errors>
		<retired_pages>
			<multiple_single_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</multiple_single_bit_retirement>
			<double_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</double_bit_retirement>
			<pending_blacklist>N/A</pending_blacklist>
			<pending_retirement>N/A</pending_retirement>
		</retired_pages>
		<remapped_rows>
			<remapped_row_corr>0</remapped_row_corr>
			<remapped_row_unc>{int(ecc["remap_unc"][0])}</remapped_row_unc>
			<remapped_row_pending>{"Yes" if ecc["pending"][0] else "No"}</remapped_row_pending>
			<remapped_row_failure>{"Yes" if ecc["failure"][0] else "No"}</remapped_row_failure>
			<row_remapper_histogram>
				<row_remapper_histogram_max>2560 bank(s)</row_remapper_histogram_max>
				<row_remapper_histogram_high>0 bank(s)</row_remapper_histogram_high>
				<row_remapper_histogram_partial>0 bank(s)</row_remapper_histogram_partial>
				<row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>
				<row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>
			</row_remapper_histogram>
		</remapped_rows>
		<temperature>
			<gpu_temp>{temp} C</gpu_temp>
			<gpu_temp_tlimit>{T_LIMIT - temp} C</gpu_temp_tlimit>
			<gpu_temp_max_tlimit_threshold>-8 C</gpu_temp_max_tlimit_threshold>
			<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>
			<gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>
			<gpu_target_temperature>N/A</gpu_target_temperature>
			<memory_temp>{int(s["mem_temp"][g][0])} C</memory_temp>
			<gpu_temp_max_mem_tlimit_threshold>0 C</gpu_temp_max_mem_tlimit_threshold>
		</temperature>
		<supported_gpu_target_temp>
			<gpu_target_temp_min>N/A</gpu_target_temp_min>
			<gpu_target_temp_max>N/A</gpu_target_temp_max>
		</supported_gpu_target_temp>
		<gpu_power_readings>
			<power_state>P0</power_state>
			<power_draw>{s["power"][g][0]:.2f} W</power_draw>
			<current_power_limit>{P_LIMIT:.2f} W</current_power_limit>
			<requested_power_limit>{P_LIMIT:.2f} W</requested_power_limit>
			<default_power_limit>{P_LIMIT:.2f} W</default_power_limit>
			<min_power_limit>200.00 W</min_power_limit>
			<max_power_limit>{P_LIMIT:.2f} W</max_power_limit>
		</gpu_power_readings>
		<module_power_readings>
			<power_state>P0</power_state>
			<power_draw>N/A</power_draw>
			<current_power_limit>N/A</current_power_limit>
			<requested_power_limit>N/A</requested_power_limit>
			<default_power_limit>N/A</default_power_limit>
			<min_power_limit>N/A</min_power_limit>
			<max_power_limit>N/A</max_power_limit>
		</module_power_readings>
		<clocks>
			<graphics_clock>{int(s["sm"][g][0])} MHz</graphics_clock>
			<sm_clock>{int(s["sm"][g][0])} MHz</sm_clock>
			<mem_clock>{MEM_CLOCK} MHz</mem_clock>
			<video_clock>{int(s["video"][g][0])} MHz</video_clock>
		</clocks>
		<applications_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
			<mem_clock>2619 MHz</mem_clock>
		</applications_clocks>
		<default_applications_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
			<mem_clock>2619 MHz</mem_clock>
		</default_applications_clocks>
		<deferred_clocks>
			<mem_clock>N/A</mem_clock>
		</deferred_clocks>
		<max_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
			<sm_clock>1980 MHz</sm_clock>
			<mem_clock>2619 MHz</mem_clock>
			<video_clock>1545 MHz</video_clock>
		</max_clocks>
		<max_customer_boost_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
		</max_customer_boost_clocks>
		<clock_policy>
			<auto_boost>N/A</auto_boost>
			<auto_boost_default>N/A</auto_boost_default>
		</clock_policy>
		<voltage>
			<graphics_volt>670.000 mV</graphics_volt>
		</voltage>
		<fabric>
			<state>Completed</state>
			<status>Success</status>
		</fabric>
		<supported_clocks>
			<supported_mem_clock>
				<value>2619 MHz</value>
{chr(10).join(clocks)}
			</supported_mem_clock>
		</supported_clocks>
{procs}
		<accounted_processes>
		</accounted_processes>
	</gpu>
""")
    parts.append("</nvidia_smi_log>")
    return ("\n".join(parts) + "\n").encode()


def topo(host) -> bytes:
    G = len(host.gpus)
    nics = host.nics
    head = ["", *[f"GPU{i}" for i in range(G)], *[f"NIC{i}" for i in range(len(nics))],
            "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    lines = ["\t".join(head)]

    def gpu_nic(gpu, nic):
        if nic.rail == gpu.index:
            return "PIX"
        return "NODE" if nic.numa == gpu.numa else "SYS"

    for gpu in host.gpus:
        cells = [" X " if o.index == gpu.index else "NV18" for o in host.gpus]
        cells += [gpu_nic(gpu, nic) for nic in nics]
        lines.append("\t".join([f"GPU{gpu.index}", *cells, cpu_list_str(gpu.numa), str(gpu.numa), "", "N/A"]))
    for k, nic in enumerate(nics):
        cells = []
        for gpu in host.gpus:
            cells.append(gpu_nic(gpu, nic))
        for j, other in enumerate(nics):
            if j == k:
                cells.append(" X ")
            else:
                cells.append("NODE" if other.numa == nic.numa else "SYS")
        lines.append("\t".join([f"NIC{k}", *cells, "", "", "", ""]))
    lines += ["", "Legend:", "",
              "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks",
              "", "NIC Legend:", ""]
    lines += [f"  NIC{k}: {nic.rdma}" for k, nic in enumerate(nics)]
    return tf.lines_bytes(lines)
