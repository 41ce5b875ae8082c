"""mlxlink (NVIDIA MFT): how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``mlxlink -d <rdma device> -p <port> -m -c`` for every RDMA port, at most once a minute (each run
reads the port's PHY registers for a second or two): link state, speed, width and FEC, mlxlink's own
troubleshooting verdict, the module (temperature, voltage, optical power, vendor, part and serial
number) and the physical counters and BER (symbol and effective errors and BER after FEC, raw BER
before it, link down and error recovery counters), whose growth over the capture is what matters. A
node without MFT records the command as failed (not found).

sosreport's mellanox_firmware plugin (with MFT; sos @5c7e63e) runs ``mlxlink -d <PCI address>`` (no
``-m``/``-c``: operational, supported and troubleshooting info) for every Mellanox Ethernet function
``.0``, or ``mstlink -d`` with mstflint alone: ``sos_commands/mellanox_firmware/mlxlink_-d_0000_08_00.0``
(sos writes the address's colons as ``_``; the device column keeps that spelling).
nvidia-bug-report.sh (with MFT's ``mst``) dumps every ConnectX primary function, Quantum switch and
GPU NVLink (``netir``) device with ``mlxlink -d <dev> --amber_collect <csv>``: its section starts with
that command line, kept as the body's first line so the parser takes the device from it; the amber CSV
printed after the text goes to ``unparsed``.
"""
from __future__ import annotations

from forensics.descriptor import BugSection, Descriptor, SosPath, Spec, MB

DESCRIPTOR = Descriptor(
    "mlxlink", "mlxlink",
    collect=(Spec("mlxlink", ("mlxlink", "-d", "{ibdev}", "-p", "{port}", "-m", "-c"), "mlxlink",
                  "mlxlink-{ibdev}-{port}.txt", mode="snapshot", expand="ibport", timeout=30, cap=32 * MB,
                  min_interval=60.0),),
    sosreport=(SosPath(r"^sos_commands/mellanox_firmware/(?:mlxlink|mstlink)_-d_(?P<device>[0-9A-Fa-f]{4}_[0-9A-Fa-f]{2}_[0-9A-Fa-f]{2}\.[0-7])$",
                       "sos_commands/mellanox_firmware/mlxlink_-d_0000_08_00.0", name="mlxlink-{device}.txt"),),
    bug_report=(BugSection(r"^\S*mlxlink -d (\S+) --amber_collect \S+ > \S+ 2>&1$", "nvidia-bug-report-mlxlink.txt",
                           "/usr/bin/mlxlink -d 0000:08:00.0 --amber_collect /tmp/mlx4242.csv > /tmp/mlx4242.info 2>&1",
                           keep_heading=True),),
)
