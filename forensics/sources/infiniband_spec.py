"""InfiniBand / RoCE ports: how they are collected and where they are found (standard library only;
see :mod:`forensics.descriptor`).

``ibstat`` once (device, firmware, port state and rate); per RDMA port at the start and every 10
minutes, ``grep -H`` of its GID table (``gids/<n>``, ``gid_attrs/types/<n>``, ``gid_attrs/ndevs/<n>``:
the port's addresses, which NCCL's transport errors name the peer by); every sampling interval, per RDMA port
(``/sys/class/infiniband/<dev>/ports/<port>``), ``grep -H`` of its ``counters`` and ``hw_counters``
and its ``state``/``phys_state``/``rate``/``link_layer`` files: the same PMA counters perfquery
reads (symbol_error, link_downed, port_rcv_errors, port_xmit_discards, port_xmit_wait, ...) plus
the driver's (out_of_buffer, np_cnp_sent, rp_cnp_handled, ...), without root or MADs, and for RoCE
ports too. A node without infiniband-diags records ``ibstat`` as a failed command (not found); a
node without RDMA ports runs no sysfs read. sosreport's infiniband plugin keeps ``ibstat``,
``ibstatus`` and ``perfquery -C <dev> -P <port>`` of each active IB port.
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, SosPath, Spec, MB

_PORT_DIR = "/sys/class/infiniband/{ibdev}/ports/{port}"

DESCRIPTOR = Descriptor(
    "infiniband", "InfiniBand port tools",
    collect=(
        Spec("ibstat", ("ibstat",), "infiniband", "ibstat.txt", timeout=30, cap=4 * MB),
        Spec("ib_sysfs", ("grep", "-H", "-s", "-r", ".", _PORT_DIR + "/state", _PORT_DIR + "/phys_state",
                          _PORT_DIR + "/rate", _PORT_DIR + "/link_layer", _PORT_DIR + "/counters",
                          _PORT_DIR + "/hw_counters"),
             "infiniband", "sysfs-{ibdev}-{port}.txt", mode="snapshot", expand="ibport", timeout=10, cap=128 * MB),
        # the port's GID table (its RoCE/IB addresses: what NCCL names a failing peer by), at the start
        # and every 10 minutes (it changes only when addresses do)
        Spec("ib_gids", ("grep", "-H", "-s", "-r", ".", _PORT_DIR + "/gids", _PORT_DIR + "/gid_attrs/types",
                         _PORT_DIR + "/gid_attrs/ndevs"),
             "infiniband", "gids-{ibdev}-{port}.txt", mode="snapshot", expand="ibport", timeout=10, cap=16 * MB,
             min_interval=600.0),
    ),
    sosreport=(
        SosPath(r"^sos_commands/infiniband/ibstat$", "sos_commands/infiniband/ibstat"),
        SosPath(r"^sos_commands/infiniband/ibstatus$", "sos_commands/infiniband/ibstatus"),
        SosPath(r"^sos_commands/infiniband/perfquery_-C_(?P<device>[A-Za-z0-9_.:-]+)_-P_(?P<port>[0-9]+)$",
                "sos_commands/infiniband/perfquery_-C_mlx5_0_-P_1", name="perfquery_-C_{device}_-P_{port}.txt"),
    ),
)
