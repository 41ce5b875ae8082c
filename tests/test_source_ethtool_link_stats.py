"""ethtool -S pasted after ifconfig / ip -s link output: the other tool's counters into link_stats,
its other lines skipped with a reason, and the paste recognised as ethtool even where the other
tool's lines are most of it."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.sources import ParseContext, parse_bytes, recognise
from forensics.sources._link_stats import read

FIX = Path(__file__).parent / "fixtures" / "ethtool"

# https://github.com/Security-Onion-Solutions/security-onion/issues/437 (2013-12-10, imported from
# code.google.com): `ip -s -s link show eth4`, its header line wrapped by the paste ("state UP qlen 1000")
IP_SS_LINK = """\
$ ip -s -s link show eth4
6: eth4: <BROADCAST,MULTICAST,NOARP,PROMISC,UP,LOWER_UP> mtu 1500 qdisc mq 
state UP qlen 1000
    link/ether 9c:8e:99:53:e3:30 brd ff:ff:ff:ff:ff:ff
    RX: bytes  packets  errors  dropped overrun mcast   
    1361950677217 1745618628 0       179     47323   12119074
    RX errors: length  crc     frame   fifo    missed
               0        0       0       0       1725828
    TX: bytes  packets  errors  dropped carrier collsns 
    0          0        0       0       0       0      
    TX errors: aborted fifo    window  heartbeat
               0        0       0       0      
"""

# https://github.com/iproute2/iproute2/issues/22 (gunhu, 2018-11-29): `ip -s link` and net-tools 2.10 `ifconfig`
# of the loopback, each after its '>$ ' prompt (the '>' of the quoting removed)
IP_LINK_AND_IFCONFIG = """\
$ ip -s link
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000
    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
    RX: bytes  packets  errors  dropped overrun mcast   
    100        2        0       0       0       0       
    TX: bytes  packets  errors  dropped carrier collsns 
    100        2        0       0       0       0       

$ ifconfig
lo: flags=73<UP,LOOPBACK,RUNNING>  mtu 65536
        inet 127.0.0.1  netmask 255.0.0.0
        inet6 ::1  prefixlen 128  scopeid 0x10<host>
        loop  txqueuelen 1000  (Local Loopback)
        RX packets 2  bytes 100 (100.0 B)
        RX errors 0  dropped 0  overruns 0  frame 0
        TX packets 2  bytes 100 (100.0 B)
        TX errors 0  dropped 0 overruns 0  carrier 0  collisions 0
"""


def _lines(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.splitlines(), start=1))


def test_ip_s_s_link_block_values_under_their_titles():
    rows, used, skipped = read(_lines(IP_SS_LINK))
    got = {r["counter"]: r["value"] for r in rows}
    assert got["rx_bytes"] == 1361950677217 and got["rx_dropped"] == 179 and got["rx_over_errors"] == 47323
    assert got["multicast"] == 12119074 and got["rx_missed_errors"] == 1725828 and got["tx_heartbeat_errors"] == 0
    # iproute2 6.x abbreviates the column: the same counter
    rows6, _, _ = read(_lines("2: eth0: <UP> mtu 1500\n    TX errors: aborted   fifo  window heartbt transns\n"
                              "                     0      0       0       3       2\n"))
    assert {r["counter"]: r["value"] for r in rows6} == {"tx_aborted_errors": 0, "tx_fifo_errors": 0,
                                                          "tx_window_errors": 0, "tx_heartbeat_errors": 3,
                                                          "carrier_changes": 2}
    assert {r["iface"] for r in rows} == {"eth4"} and {r["tool"] for r in rows} == {"ip -s link"}
    assert len(rows) == 6 + 5 + 6 + 4
    assert [ln for ln, _ in skipped] == [3, 4]  # the wrapped header, link/ether
    assert 1 not in used and used | {3, 4} == set(range(2, 13))


def test_ip_link_and_new_ifconfig_of_one_interface():
    rows, used, skipped = read(_lines(IP_LINK_AND_IFCONFIG))
    by_tool = {}
    for r in rows:
        by_tool.setdefault(r["tool"], {})[r["counter"]] = r["value"]
    assert by_tool["ip -s link"] == {"rx_bytes": 100, "rx_packets": 2, "rx_errors": 0, "rx_dropped": 0,
                                     "rx_over_errors": 0, "multicast": 0, "tx_bytes": 100, "tx_packets": 2,
                                     "tx_errors": 0, "tx_dropped": 0, "tx_carrier_errors": 0, "collisions": 0}
    assert by_tool["ifconfig"] == {"rx_packets": 2, "rx_bytes": 100, "rx_errors": 0, "rx_dropped": 0,
                                   "rx_fifo_errors": 0, "rx_frame_errors": 0, "tx_packets": 2, "tx_bytes": 100,
                                   "tx_errors": 0, "tx_dropped": 0, "tx_fifo_errors": 0, "tx_carrier_errors": 0,
                                   "collisions": 0}
    assert [ln for ln, _ in skipped] == [3, 11, 12, 13]
    assert 1 not in used and 9 not in used  # prompts are not the blocks' lines


def test_fixture_ifconfig_then_ethtool_accounted():
    data = (FIX / "ethtool--netdata988-echo-ifconfig-then-S-e1000e.txt").read_bytes()
    name, res = parse_bytes(data, None, ParseContext(host="h"))
    assert name == "ethtool"
    ls = res.tables["link_stats"]
    got = dict(zip(ls["counter"], ls["value"]))
    assert got["rx_dropped"] == 7183 and got["rx_packets"] == 3811442658 and got["tx_bytes"] == 4635258443813
    assert res.tables["nic_counters"].height == 27
    skipped = sum(res.meta["skipped"].values())
    assert skipped == 5  # inet, inet6 x2, flags, Interrupt
    used = res.lines - res.unparsed.height - skipped
    assert res.unparsed["line_no"].to_list() == [1]  # the echoed interface name
    assert used == 40 - 1 - 5


@pytest.mark.parametrize("prefix", [IP_SS_LINK, IP_LINK_AND_IFCONFIG])
def test_other_tool_lines_most_of_the_paste_still_ethtool(prefix):
    # CONSTRUCTED: one of the real blocks above, then a real `ethtool -S | grep` excerpt's two lines
    # (netdata/netdata#988, e1000e), as people paste "ifconfig shows drops; ethtool says:"
    data = (prefix + "\n$ ethtool -S eth0 | grep -e miss -e no_buf\n"
            "     rx_no_buffer_count: 527\n     rx_missed_errors: 4954\n").encode()
    name, verdict = recognise(data)
    assert name == "ethtool", verdict
    _, res = parse_bytes(data, None, ParseContext(host="h"))
    assert res.tables["nic_counters"].height == 2 and res.tables["link_stats"].height > 10
    skipped = sum(res.meta.get("skipped", {}).values())
    assert res.lines == res.unparsed.height + skipped + (res.lines - res.unparsed.height - skipped)
    assert res.unparsed.height == 0  # the ifconfig / ip command lines are facts, as ethtool's own are structure
    assert [c["command"] for c in res.meta["commands"]] == [
        ln for ln in prefix.splitlines() if ln.startswith("$ ")]


def test_only_ifconfig_is_not_ethtool():
    assert recognise(IP_LINK_AND_IFCONFIG.encode())[0] != "ethtool"
