"""Text rewriting on real lines (from tests/fixtures): what changes, what must not."""
from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from forensics.redact.discover import Known, domain_pass, from_lines
from forensics.redact.mapper import CLASSES, Mapper
from forensics.redact.rewrite import Rewriter

FIX = Path(__file__).parent / "fixtures"
KEY = b"test key for the rewrite tests.."


def fixture_lines(source: str, case: str) -> list[str]:
    (path,) = [p for p in (FIX / source).glob(f"{source}--*{case}*") if not p.name.endswith(".json")]
    return path.read_text(encoding="latin-1").split("\n")


def rewriter(lines: list[str], classes=CLASSES) -> tuple[Rewriter, Known, Mapper]:
    known = Known()
    ser = pl.Series(lines, dtype=pl.String)
    from_lines(ser, known)
    domain_pass(ser, known)
    m = Mapper(KEY)
    return Rewriter(m, set(classes), known), known, m


def test_nccl_fqdn_peer_and_prefix():
    lines = fixture_lines("nccl", "issue795-aws-p4d-broken-pipe")
    rw, known, m = rewriter(lines)
    assert "a100-st-p4d24xlarge-22" in known.hosts
    assert "luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster" in known.domains
    out = rw.strings(lines)
    text = "\n".join(out)
    for original in ("a100-st-p4d24xlarge-22", "luciodelelis", "10.200.84.247", "92732890"):
        assert original not in text
    host = m.hostname("a100-st-p4d24xlarge-22")
    assert out[0].startswith(host + ":183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from ")
    assert out[0].endswith("<58355> failed : Broken pipe")
    assert re.search(rf"remote peer {host}\.dom-[0-9a-f]{{8}}<47861>$", out[7])
    assert [len(a.split()) for a in lines] == [len(b.split()) for b in out]  # same words, only values differ


def test_nccl_ib_gids_with_and_without_separator():
    lines = fixture_lines("nccl", "issue1405-ib-status12-vendor129-ipv6-gids")
    rw, _, m = rewriter(lines)
    out = rw.strings(lines)
    line = out[0]
    assert "kp-ddp-worker-0" not in line and "fd00:1148" not in line and "10.216.210.236" not in line
    assert f"localGid {m.ipv6('fd00:1148:9000:5000:4:200:3:ff22')} remoteGids{m.ipv6('fd00:1148:9000:5000:4:200:3:ff1f')}" in line
    assert f"peer {m.ipv4('10.216.210.236')}<54862> with status=12" in line


def test_ipv4_mapped_gids_match_the_peer_address():
    line = ("hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 172.36.143.59<44206> "
            "with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221")
    rw, known, m = rewriter([line])  # tests/fixtures/nccl/nccl--nccl-issue1814-ib-completion-status12-vendor129-roce.txt
    assert known.hosts == {"hostname-test"}
    out = rw.text(line)
    assert f"localGid ::ffff:{m.ipv4('29.87.88.182')} remoteGids::ffff:{m.ipv4('29.87.4.221')}" in out
    assert f"peer {m.ipv4('172.36.143.59')}<44206>" in out and out.startswith(m.hostname("hostname-test") + ":984:1357 [4]")



def test_sysfs_gid_table_entries_as_grep_prints_them():
    """`grep -H . .../ports/1/gids/*` (the collector's ib_gids capture) puts the GID right after
    "gids/<n>:": its IPv4-mapped RoCE address must get the same pseudonym as the address NCCL prints."""
    lines = ["/sys/class/infiniband/mlx5_0/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:0a64:000a",
             "/sys/class/infiniband/mlx5_0/ports/1/gids/12:fe80:0000:0000:0000:966d:aeff:fe24:e383",
             "peer 10.100.0.10<4711> remoteGids::ffff:10.100.0.10"]
    rw, _, m = rewriter(lines)
    out = rw.strings(lines)
    assert "0a64:000a" not in out[0] and "fe24:e383" not in out[1] and "10.100.0.10" not in out[2]
    assert out[0] == "/sys/class/infiniband/mlx5_0/ports/1/gids/3:" + m.ipv6("0000:0000:0000:0000:0000:ffff:0a64:000a")
    assert out[1].startswith("/sys/class/infiniband/mlx5_0/ports/1/gids/12:fe80:0000:0000:0000:")
    mapped = m.ipv4("10.100.0.10")
    assert out[2] == f"peer {mapped}<4711> remoteGids::ffff:{mapped}"
    assert out[0].endswith("ffff:%02x%02x:%02x%02x" % tuple(int(x) for x in mapped.split(".")))

def test_what_must_not_change():
    rw, _, _ = rewriter(["node07:1:2 [0] NCCL INFO x"])
    keep = [
        "[rank5]:[E1130 11:01:04.896614400 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 5] c10d::ProcessGroupNCCL::WorkNCCL",
        "terminate called after throwing an instance of 'c10::DistBackendError' at::Tensor std::runtime_error",
        "2026-11-30T10:00:00.519753+00:00 mlx5_core 0000:18:00.0 enp24s0np0: Link up 10:00:01.123",
        "NCCL version 2.21.5+cuda12.4 driver 535.104.05 firmware 28.39.2048 VBIOS 96.00.89.00.01",
        "    Bus Id                                : 00000000:18:00.0",
        "commId 0xbf040b6394181ce7 busId 2a000 comm 0x555682913cb4",
        "     rx_prio3_pause: 123456",
        "Genmask 255.255.255.0 dev lo 127.0.0.1 mcast 224.0.0.251 ::1 ff02::1",
        "/root/train.py --user=root /home/ubuntu/x",
    ]
    assert rw.strings(keep) == keep


def test_hosts_in_free_text_users_and_chrony():
    lines = ["node07:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>",
             "[ 12.3] NVRM: node07 GPU at PCI:0000:18:00: GPU-6238ca75-8134-38dc-20e3-61e8ecd8d089",
             '{"cmdline": ["/home/jdoe/venv/bin/python", "/scratch/jdoe/train.py", "user=jdoe"], "log": "nccl.node07.1234.log"}',
             "Reference ID    : A9FEA97B (169.254.169.123)",
             "ssh ip-10-0-139-244 NODE07.corp.example.com node070 mynode07"]
    rw, known, m = rewriter(lines)
    assert "jdoe" in known.users and "node07" in known.hosts
    out = rw.strings(lines)
    h = m.hostname("node07")
    assert f"NVRM: {h} GPU" in out[1] and m.uuid("6238ca75-8134-38dc-20e3-61e8ecd8d089") in out[1]
    u = m.user("jdoe")
    assert out[2] == (f'{{"cmdline": ["/home/{u}/venv/bin/python", "/scratch/{u}/train.py", "user={u}"], '
                      f'"log": "nccl.{h}.1234.log"}}')
    ip = m.ipv4("169.254.169.123")
    assert out[3] == "Reference ID    : %08X (%s)" % (int.from_bytes(bytes(map(int, ip.split("."))), "big"), ip)
    assert out[4].startswith(f"ssh {m.hostname('ip-10-0-139-244')} {h}.")
    assert "corp.example.com" in known.domains and "example.com" not in out[4]
    assert out[4].endswith(" node070 mynode07")  # other words are not the host


def test_kept_classes_are_left_alone():
    line = "node07:1:2 [0] NCCL WARN peer 10.1.2.3<5> mac 94:6d:ae:2d:71:0a GPU-6238ca75-8134-38dc-20e3-61e8ecd8d089"
    rw, _, m = rewriter([line], classes={"hostnames"})
    assert rw.text(line) == line.replace("node07", m.hostname("node07"))
    rw, _, _ = rewriter([line], classes={"ips", "macs", "uuids"})
    out = rw.text(line)
    assert out.startswith("node07:1:2") and "10.1.2.3" not in out and "2d:71:0a" not in out and "6238ca75" not in out


@pytest.mark.parametrize("source,case,values", [
    ("nvidia_smi", "q-a10-535-remap-pending", ["1324521052681", "73d12ef7-f589-f867-4259-c7090ab44736"]),
    ("sar", "centos79-n-DEV-average", ["node01", "example.com"]),
    ("dmesg", "journalctl-short-iso-peermem", ["exp03-ft-896z-1-lan", "exp03-ft-896z-job-svc"]),
    ("dmesg", "pfring-syslog-ixgbe-link-flap", ["superserver"]),
    ("nvidia_smi", "q-rtx5080-580-event-counters", ["0x8ae21ce04abcb64b"]),  # GPU PDI
])
def test_structural_identifiers_of_real_outputs(source, case, values):
    lines = fixture_lines(source, case)
    text = "\n".join(lines)
    assert all(v in text for v in values)
    rw, _, _ = rewriter(lines)
    out = "\n".join(rw.strings(lines))
    assert not [v for v in values if v.lower() in out.lower()]
    assert len(out.split("\n")) == len(lines)


def test_gpu_pdi_is_redacted_with_the_serials():
    """The GPU's Per-Device Identifier (nvidia-smi -q, driver 575+) is as unique as a serial: found in
    the text and XML forms, replaced by hex of the same length, kept with --keep serials."""
    lines = fixture_lines("nvidia_smi", "q-rtx5080-580-event-counters")
    (pdi_line,) = [line for line in lines if "GPU PDI" in line]
    rw, known, m = rewriter(lines)
    assert "0x8ae21ce04abcb64b" in known.serials
    new = m.serial("0x8ae21ce04abcb64b")
    assert re.fullmatch(r"0x[0-9a-f]{16}", new) and new != "0x8ae21ce04abcb64b"
    assert rw.strings([pdi_line]) == [pdi_line.replace("0x8ae21ce04abcb64b", new)]
    xml = ["<gpu id=\"00000000:01:00.0\">", "\t\t<pdi>0x145C8E416B389D3E</pdi>", "</gpu>"]
    rw, known, m = rewriter(xml)
    assert known.serials == {"0x145C8E416B389D3E"} and re.fullmatch(r"\t\t<pdi>0x[0-9A-F]{16}</pdi>", rw.strings(xml)[1])
    rw, _, _ = rewriter(lines, classes=set(CLASSES) - {"serials"})
    assert rw.strings([pdi_line]) == [pdi_line]


def test_infiniband_guids_from_ibstat():
    path = Path(__file__).parent / "fixtures" / "other_tools" / "shadeform-ibstat-8x-cx6-mt4123-hdr-rate100.txt"
    lines = path.read_text().split("\n")
    rw, known, m = rewriter(lines)
    assert 0x1070FD0300A41F36 in known.guids
    out = rw.strings(lines)
    text = "\n".join(out)
    assert "0x1070fd0300a41f36" not in text and "0x1070fd0300a41ec2" not in text
    new = "0x%016x" % m.guid(0x1070FD0300A41F36)
    assert f"\tNode GUID: {new}" in out and f"\t\tPort GUID: {new}" in out and new.startswith("0x1070fd")
    assert "\t\tCapability mask: 0xa651e848" in out and "\tFirmware version: 20.36.1010" in out
    # the same GUID inside a link-local GID keeps the same pseudonym
    gid = m.ipv6("fe80:0000:0000:0000:1070:fd03:00a4:1f36")
    assert gid.replace(":", "").endswith(new[2:])
