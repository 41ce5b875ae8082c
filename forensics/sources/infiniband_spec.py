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
node without RDMA ports runs no sysfs read.

Every sampling interval, per InfiniBand link-layer port (its sysfs ``link_layer`` is ``InfiniBand``; RoCE
ports have no LID to address), ``perfquery -x -C <dev> -P <port>``: PortCountersExtended, where
PortXmitWait is a 64-bit field. sysfs has only the 32-bit one (drivers/infiniband/core/sysfs.c
``PORT_PMA_ATTR(port_xmit_wait, 0, 32, 320)``, in the extended attribute group too), which 2^32 ticks of
8 bytes fill in 0.69 s of waiting at 400 Gb/s. perfquery prints the extended PortXmitWait only when the
PMA's ClassPortInfo CapabilityMask2 has IsAdditionalPortCountersExtendedSupported (bit 1; rdma-core
infiniband-diags/perfquery.c ``dump_perfcounters_ext``): ``(CapMask: 0x5300 CapMask2: 0x0000002)`` in
tests/fixtures/infiniband. A PMA that does not (the mlx5 kernel driver answers PMA Gets itself where the
device has vport counters and declares only the extended width, ``CapMask: 0x200``: drivers/infiniband/
hw/mlx5/mad.c ``process_pma_cmd``) prints the data and packet counters alone, and the 32-bit sysfs
counter is all there is. perfquery needs the umad device (root by default); without it, or without
infiniband-diags, the command is recorded as failed. sosreport's infiniband plugin (sos @5c7e63e) keeps ``ibstat``,
``ibstatus``, ``ibv_devinfo -v`` (the GID tables are read from it) and ``perfquery -C <dev> -P <port>`` of each
active IB port; it copies no sysfs counters and runs no ``rdma statistic``.
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
        # PortCountersExtended of each InfiniBand port: the 64-bit PortXmitWait where the PMA has it
        Spec("ib_perfquery_x", ("perfquery", "-x", "-C", "{ibdev}", "-P", "{port}"), "infiniband",
             "perfquery-x-{ibdev}-{port}.txt", mode="snapshot", expand="ibport_ib", timeout=10, cap=64 * MB),
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
        # ibv_devinfo -v of every device: its GID[n] lines (each port's addresses) are read
        SosPath(r"^sos_commands/infiniband/ibv_devinfo_-v$", "sos_commands/infiniband/ibv_devinfo_-v"),
        SosPath(r"^sos_commands/infiniband/perfquery_-C_(?P<device>[A-Za-z0-9_.:-]+)_-P_(?P<port>[0-9]+)$",
                "sos_commands/infiniband/perfquery_-C_mlx5_0_-P_1", name="perfquery_-C_{device}_-P_{port}.txt"),
    ),
)
