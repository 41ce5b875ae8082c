"""Column maps: sysstat's header names (text, iostat -o JSON, sadf -j) -> table columns and scales."""
from __future__ import annotations

import re


# ---------------------------------------------------------------- column maps
# header name (text and sadf -d) or JSON key -> (table column, factor); int columns are marked.

DISK_COLS: dict[str, tuple[str, float]] = {
    "rrqm/s": ("rrqm_s", 1), "wrqm/s": ("wrqm_s", 1), "drqm/s": ("drqm_s", 1),
    "r/s": ("r_s", 1), "w/s": ("w_s", 1), "d/s": ("d_s", 1), "f/s": ("f_s", 1),
    "rkB/s": ("rkb_s", 1), "wkB/s": ("wkb_s", 1), "dkB/s": ("dkb_s", 1),
    "rMB/s": ("rkb_s", 1024), "wMB/s": ("wkb_s", 1024), "dMB/s": ("dkb_s", 1024),
    "rsec/s": ("rkb_s", 0.5), "wsec/s": ("wkb_s", 0.5), "dsec/s": ("dkb_s", 0.5),
    "rd_sec/s": ("rkb_s", 0.5), "wr_sec/s": ("wkb_s", 0.5), "dc_sec/s": ("dkb_s", 0.5),
    "%rrqm": ("rrqm_pct", 1), "%wrqm": ("wrqm_pct", 1), "%drqm": ("drqm_pct", 1),
    "r_await": ("r_await_ms", 1), "w_await": ("w_await_ms", 1), "d_await": ("d_await_ms", 1),
    "f_await": ("f_await_ms", 1), "await": ("await_ms", 1),
    "rareq-sz": ("rareq_sz_kb", 1), "wareq-sz": ("wareq_sz_kb", 1), "dareq-sz": ("dareq_sz_kb", 1),
    "areq-sz": ("areq_sz_kb", 1), "avgrq-sz": ("avgrq_sz_sectors", 1),
    "aqu-sz": ("aqu_sz", 1), "avgqu-sz": ("aqu_sz", 1), "svctm": ("svctm_ms", 1),
    "%util": ("util_pct", 1), "tps": ("tps", 1),
    "kB_read/s": ("kb_read_s", 1), "kB_wrtn/s": ("kb_wrtn_s", 1), "kB_dscd/s": ("kb_dscd_s", 1),
    "MB_read/s": ("kb_read_s", 1024), "MB_wrtn/s": ("kb_wrtn_s", 1024), "MB_dscd/s": ("kb_dscd_s", 1024),
    "Blk_read/s": ("kb_read_s", 0.5), "Blk_wrtn/s": ("kb_wrtn_s", 0.5), "Blk_dscd/s": ("kb_dscd_s", 0.5),
    "kB_read": ("kb_read", 1), "kB_wrtn": ("kb_wrtn", 1), "kB_dscd": ("kb_dscd", 1),
    "MB_read": ("kb_read", 1024), "MB_wrtn": ("kb_wrtn", 1024), "MB_dscd": ("kb_dscd", 1024),
    "Blk_read": ("kb_read", 0.5), "Blk_wrtn": ("kb_wrtn", 0.5), "Blk_dscd": ("kb_dscd", 0.5),
}
DISK_JSON = {  # iostat -o JSON and sadf -j keys that differ from the text headers
    **DISK_COLS, "rrqm": ("rrqm_pct", 1), "wrqm": ("wrqm_pct", 1), "drqm": ("drqm_pct", 1),
    "util": ("util_pct", 1), "util-percent": ("util_pct", 1),
    "rkB": ("rkb_s", 1), "wkB": ("wkb_s", 1), "dkB": ("dkb_s", 1),
    "rd_sec": ("rkb_s", 0.5), "wr_sec": ("wkb_s", 0.5), "dc_sec": ("dkb_s", 0.5),
}
CPU_COLS = {
    **{k: (v, 1) for k, v in {
        "%user": "user_pct", "%usr": "user_pct", "%nice": "nice_pct", "%system": "system_pct",
        "%sys": "system_pct", "%iowait": "iowait_pct", "%steal": "steal_pct", "%irq": "irq_pct",
        "%soft": "soft_pct", "%guest": "guest_pct", "%gnice": "gnice_pct", "%idle": "idle_pct"}.items()},
}
CPU_JSON = {k.lstrip("%"): v for k, v in CPU_COLS.items()}
NET_DEV_COLS = {
    "rxpck/s": ("rxpck_s", 1), "txpck/s": ("txpck_s", 1), "rxkB/s": ("rxkb_s", 1), "txkB/s": ("txkb_s", 1),
    "rxbyt/s": ("rxkb_s", 1 / 1024), "txbyt/s": ("txkb_s", 1 / 1024),
    "rxcmp/s": ("rxcmp_s", 1), "txcmp/s": ("txcmp_s", 1), "rxmcst/s": ("rxmcst_s", 1),
    "%ifutil": ("ifutil_pct", 1),
}
NET_DEV_JSON = {"rxpck": ("rxpck_s", 1), "txpck": ("txpck_s", 1), "rxkB": ("rxkb_s", 1), "txkB": ("txkb_s", 1),
                "rxcmp": ("rxcmp_s", 1), "txcmp": ("txcmp_s", 1), "rxmcst": ("rxmcst_s", 1),
                "ifutil-percent": ("ifutil_pct", 1)}
_EDEV = ("rxerr", "txerr", "coll", "rxdrop", "txdrop", "txcarr", "rxfram", "rxfifo", "txfifo")
NET_EDEV_COLS = {f"{k}/s": (f"{k}_s", 1) for k in _EDEV}
NET_EDEV_JSON = {k: (f"{k}_s", 1) for k in _EDEV}
MEM_COLS = {
    "kbmemfree": ("kbmemfree", 1), "kbavail": ("kbavail", 1), "kbmemused": ("kbmemused", 1),
    "%memused": ("memused_pct", 1), "kbbuffers": ("kbbuffers", 1), "kbcached": ("kbcached", 1),
    "kbcommit": ("kbcommit", 1), "%commit": ("commit_pct", 1), "kbactive": ("kbactive", 1),
    "kbinact": ("kbinact", 1), "kbdirty": ("kbdirty", 1), "kbshmem": ("kbshmem", 1),
    "kbanonpg": ("kbanonpg", 1), "kbslab": ("kbslab", 1), "kbkstack": ("kbkstack", 1),
    "kbpgtbl": ("kbpgtbl", 1), "kbvmused": ("kbvmused", 1),
}
MEM_JSON = {"memfree": ("kbmemfree", 1), "avail": ("kbavail", 1), "memused": ("kbmemused", 1),
            "memused-percent": ("memused_pct", 1), "buffers": ("kbbuffers", 1), "cached": ("kbcached", 1),
            "commit": ("kbcommit", 1), "commit-percent": ("commit_pct", 1), "active": ("kbactive", 1),
            "inactive": ("kbinact", 1), "dirty": ("kbdirty", 1), "shared": ("kbshmem", 1),
            "anonpg": ("kbanonpg", 1), "slab": ("kbslab", 1), "kstack": ("kbkstack", 1),
            "pgtbl": ("kbpgtbl", 1), "vmused": ("kbvmused", 1)}
QUEUE_COLS = {"runq-sz": ("runq_sz", 1), "plist-sz": ("plist_sz", 1), "ldavg-1": ("ldavg_1", 1),
              "ldavg-5": ("ldavg_5", 1), "ldavg-15": ("ldavg_15", 1), "blocked": ("blocked", 1)}

# columns whose values are text, not numbers (sar -m USB, sar -m BAT)
TEXT_COLS = {"idvendor", "idprod", "manufact", "product", "status"}
_ITEM_HDR = re.compile(r"^[A-Z][A-Z0-9_]*$")


_PER_CPU_HDR = re.compile(r"^CPU[0-9]+$")


def is_item_header(h: str) -> bool:
    """Upper-case header names (CPU, IFACE, DEV, INTR, TTY, FCHOST, FILESYSTEM, ...) name the row's item.

    Per-CPU value columns (CPU0, CPU1, ... of sar -I) are values, not items.
    """
    return bool(_ITEM_HDR.match(h)) and not _PER_CPU_HDR.match(h)
