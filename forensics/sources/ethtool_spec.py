"""ethtool -S: how it is collected and where it is found (standard library only; see :mod:`forensics.descriptor`)."""
from __future__ import annotations

from forensics.descriptor import Descriptor, FileHint, SosPath, Spec, MB

DESCRIPTOR = Descriptor(
    "ethtool", "ethtool",
    collect=(Spec("ethtool_s", ("ethtool", "-S", "{iface}"), "ethtool", "{iface}.txt", mode="snapshot", expand="iface",
                  timeout=10, cap=256 * MB),),
    sosreport=(SosPath(r"^sos_commands/networking/ethtool_-S_(?P<iface>[^/]+)$",
                       "sos_commands/networking/ethtool_-S_ens1f0np0", name="{iface}.txt"),),
    file_hints=(FileHint("iface", r"^(.+?)(?:\.txt)?$", ("ens1f0np0.txt", "ens1f0np0")),),  # raw/ethtool/<iface>.txt
    events=("nic_link_down_counter", "nic_pause_storm"),
)
