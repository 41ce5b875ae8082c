"""mlxlink (NVIDIA MFT): how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``mlxlink -d <rdma device> -p <port> -m -c`` for every RDMA port, at most once a minute (each run
reads the port's PHY registers for a second or two): link state, speed, width and FEC, mlxlink's own
troubleshooting verdict, the module (temperature, voltage, optical power, vendor, part and serial
number) and the physical counters and BER (symbol and effective errors and BER after FEC, raw BER
before it, link down and error recovery counters), whose growth over the capture is what matters. A
node without MFT records the command as failed (not found). sosreport and nvidia-bug-report do not
run mlxlink.
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, Spec, MB

DESCRIPTOR = Descriptor(
    "mlxlink", "mlxlink",
    collect=(Spec("mlxlink", ("mlxlink", "-d", "{ibdev}", "-p", "{port}", "-m", "-c"), "mlxlink",
                  "mlxlink-{ibdev}-{port}.txt", mode="snapshot", expand="ibport", timeout=30, cap=32 * MB,
                  min_interval=60.0),),
)
