"""ethtool -S counter names: the queue-free ``counter`` and ``queue`` of each name as printed.

``raw_name`` keeps the name as printed, trimmed. Per-queue names are split into a
queue-free ``counter`` and ``queue``; the queue token is removed and the direction kept:

====================================  ==================================  =====
printed                               counter                             queue
====================================  ==================================  =====
``rx0_packets`` (mlx5 rx/tx/ch,       ``rx_packets``                      0
ptp_tx, ptp_cq, qos_tx)
``tx3_0_packets`` (old mlx5 tx ch_tc)  ``tx_0_packets``                    3
``rx_queue_0_packets`` (ixgbe, ice,   ``rx_packets``                      0
virtio_net)
``queue_2_tx_cnt`` (ena)              ``tx_cnt``                          2
``tx-0.tx_packets`` / ``rx-1.bytes``  ``tx_packets`` / ``rx_bytes``       0 / 1
``tx-xdp-cpu-5.tx_packets`` (sfc)     ``tx_xdp_cpu_tx_packets``           5
``[3]: rx_bytes`` / ``rxq3: rx_bytes`` ``rx_bytes``                        3
``TSO pkts tx`` under ``Tx Queue#: 1`` ``TSO pkts tx``                     1
====================================  ==================================  =====

Priority / class-of-service / lane / size numbers are *not* queues: ``rx_prio3_pause``,
``rx_pfc_ena_frames_pri3``, ``pfc_pri3_rx_duration_us``, ``rx_discard_packets_cos0``,
``tx_priority_3_xoff.nic``, ``rx_err_lane_0_phy`` keep their full name with queue null.
"""
from __future__ import annotations

import polars as pl

NAME_MAX = 64  # ETH_GSTRING_LEN is 32; netlink stat names are longer but well under this

# Queue prefixes (prefix only: the rest of the name is sliced off, never captured).
_QUEUE_PREFIX = (
    r"^((?:rx|tx)_queue_[0-9]+_"            # ixgbe, igb, ice, virtio_net, hv_netvsc: rx_queue_0_packets
    r"|queue_[0-9]+_"                       # ena: queue_0_tx_cnt
    r"|(?:rx|tx)(?:-[a-z]+)*-[0-9]+\."      # i40e, iavf, sfc: tx-0.tx_packets, rx-1.bytes, tx-xdp-cpu-3.x
    r"|(?:rx|tx|ch|ptp_tx|ptp_cq|qos_tx)[0-9]+_)"  # mlx5: rx0_packets, ch0_events, ptp_tx0_packets
)

KNOWN_NAMES: list[pl.DataFrame | None] = [None]  # every counter name mapped so far (see join_names)
KNOWN_NAMES_MAX = 1 << 16
_QUEUE_HEADERS = ["Tx Queue#", "Rx Queue#"]


def name_map(keys: pl.DataFrame) -> pl.DataFrame:
    """Per distinct name part `k` (as printed): raw_name, queue-free counter, queue, name_reason."""
    m = keys.with_columns(pl.col("k").str.strip_chars(" \t").alias("raw_name"))
    m = m.with_columns(pl.col("raw_name").str.extract(_QUEUE_PREFIX, 1).alias("qp"))
    m = m.with_columns(
        pl.col("qp").str.replace(r"[-_]?[0-9]+[._]$", "").str.replace(r"_?queue$", "")
        .str.replace_all("-", "_", literal=True).alias("stem"),
        pl.col("raw_name").str.strip_prefix(pl.col("qp")).alias("rest"),
        pl.col("qp").str.extract(r"([0-9]+)", 1).cast(pl.Int32, strict=False).alias("qn"),
    )
    split_ok = pl.col("qn").is_not_null() & (pl.col("rest") != "")
    counter = (pl.when(~split_ok).then(pl.col("raw_name"))
               .when(pl.col("stem") == "").then(pl.col("rest"))
               .when(pl.col("rest").str.starts_with(pl.col("stem") + "_")).then(pl.col("rest"))
               .otherwise(pl.col("stem") + "_" + pl.col("rest")))
    reason = (pl.when(pl.col("raw_name") == "").then(pl.lit("empty counter name"))
              .when(pl.col("raw_name").str.len_chars() > NAME_MAX)
              .then(pl.lit(f"counter name longer than {NAME_MAX} characters")))
    return m.select("k", "raw_name", counter.alias("counter"),
                    pl.when(split_ok).then(pl.col("qn")).alias("queue"), reason.alias("name_reason"))


def join_names(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` (counter lines, with `k`) + raw_name, counter, queue, name_reason (name_map) and _qhdr
    (a vmxnet3 queue header's name). Names are mapped once per process, not once per file: the rows
    are joined with every name mapped so far, and only the names not seen yet are mapped and added."""
    known = KNOWN_NAMES[0]
    if known is not None:
        out = rows.join(known, on="k", how="left", maintain_order="left")
        if not out["raw_name"].null_count():
            return out
        new = out.filter(pl.col("raw_name").is_null()).select("k").unique()
        if known.height + new.height > KNOWN_NAMES_MAX:  # start over with this block's names
            known, new = None, rows.select("k").unique()
    else:
        new = rows.select("k").unique()
    new = name_map(new.filter(pl.col("k").is_not_null())).with_columns(
        pl.col("raw_name").is_in(_QUEUE_HEADERS).alias("_qhdr"))
    # (another thread may have added some of them meanwhile: a name must join one row only)
    known = new if known is None else pl.concat([known, new]).unique(subset="k", keep="first", maintain_order=True)
    KNOWN_NAMES[0] = known
    return rows.join(known, on="k", how="left", maintain_order="left")
