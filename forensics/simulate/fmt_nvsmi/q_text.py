"""``nvidia-smi -q`` snapshots (the H100 / 545.23.08 layout of tests/fixtures/nvidia_smi)."""
from __future__ import annotations

import datetime as dt

import numpy as np

from forensics.layout import format_marker
from forensics.simulate import textfmt as tf
from forensics.simulate.config import CUDA, DRIVER
from forensics.simulate.fmt_nvsmi.common import T_LIMIT, gpu_process, reason_state
from forensics.simulate.series import (MEM_CLOCK, MEM_TOTAL, P_LIMIT, R_APP, R_HW_BRAKE, R_HW_SLOW, R_HW_THERMAL,
                                       R_IDLE, R_SW_POWER, R_SW_THERMAL, R_SYNC)


def _gpu_block(gpu, s: dict, g: int, i: int, ecc: dict, proc: tuple | None, pm: str = "Enabled") -> str:
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
    sbe_agg = sbe + int(ecc["sbe_agg"][i])
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
    Persistence Mode                      : {pm}
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
        Idle                              : {reason_state(bits, R_IDLE)}
        Applications Clocks Setting       : {reason_state(bits, R_APP)}
        SW Power Cap                      : {reason_state(bits, R_SW_POWER)}
        HW Slowdown                       : {reason_state(bits, R_HW_SLOW)}
            HW Thermal Slowdown           : {reason_state(bits, R_HW_THERMAL)}
            HW Power Brake Slowdown       : {reason_state(bits, R_HW_BRAKE)}
        Sync Boost                        : {reason_state(bits, R_SYNC)}
        SW Thermal Slowdown               : {reason_state(bits, R_SW_THERMAL)}
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
            DRAM Correctable              : {sbe_agg}
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


def q_snapshots(host, hm, times: np.ndarray) -> bytes:
    s = hm.gpu(times, 1.0, "q")
    eccs = [hm.ecc(g, times) for g in range(hm.G)]
    stamps = tf.times(host.wall(times), host.tz, "%a %b %e %H:%M:%S %Y").to_list()
    out = []
    for i, t in enumerate(times):
        ts = dt.datetime.fromtimestamp(round(float(host.wall(t)), 6), dt.timezone.utc)
        out.append(format_marker(ts, "nvidia-smi -q"))
        out.append("")
        out.append("==============NVSMI LOG==============")
        out.append("")
        out.append(f"Timestamp                                 : {stamps[i]}")
        out.append(f"Driver Version                            : {DRIVER}")
        out.append(f"CUDA Version                              : {CUDA}")
        out.append("")
        out.append(f"Attached GPUs                             : {len(host.gpus)}")
        blocks = [_gpu_block(gpu, s, g, i, eccs[g], gpu_process(host, hm, g, i, s),
                             "Disabled" if (hm.h, g) in hm.plan.persistence_off else "Enabled")
                  for g, gpu in enumerate(host.gpus) if not s["lost"][g][i]]
        out.append("\n\n".join(blocks))
    return ("\n".join(out) + "\n").encode()
