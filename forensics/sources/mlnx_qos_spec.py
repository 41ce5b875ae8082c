"""mlnx_qos: how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``mlnx_qos -i <iface>`` of every sampled interface, once (the first sample; ``min_interval`` keeps it
from repeating: QoS configuration does not change during a capture). A NIC that is no ConnectX or a
node without mlnx_qos (MLNX_OFED / mstflint tools) records a failed command per interface.
Neither sosreport nor nvidia-bug-report runs it.
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, FileHint, Spec, MB

DESCRIPTOR = Descriptor(
    "mlnx_qos", "mlnx_qos",
    collect=(Spec("mlnx_qos", ("mlnx_qos", "-i", "{iface}"), "mlnx_qos", "{iface}.txt", mode="snapshot", expand="iface",
                  timeout=20, cap=1 * MB, min_interval=1e9),),
    file_hints=(FileHint("iface", r"^(.+?)(?:\.txt)?$", ("ens1f0np0.txt", "ens1f0np0")),),  # raw/mlnx_qos/<iface>.txt
)
