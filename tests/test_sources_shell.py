"""The shell prompt's shapes are defined once (forensics.sources._shell) and every parser that looks for a
prompt or a command line recognises the same ones: nccl's reason for a prompt line, ethtool's command lines
and the host a prompt names, and the commands numactl, sar, iostat and nvidia-smi put in meta."""
from __future__ import annotations

import re

import pytest

from forensics.sources import ParseContext, nccl, numactl
from forensics.sources._ethtool_snapshot import command_at
from forensics.sources._shell import PROMPT_HOST, command_re

# real shapes: Debian/Ubuntu bash, root, SUSE's "~>" (the Aurora numactl fixture), Red Hat's brackets (the
# e1000e ethtool fixture), a conda environment, zsh's "%", a bare "$"
SHAPES = ["user@host:~$ ", "root@node1:/tmp# ", "knight@x4105c5s5b0n0:~> ", "[user@node1 ~]$ ",
          "(base) user@node1:~$ ", "user@node1 % ", "$ "]
NCCL_LINE = b"node1:123:456 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"


@pytest.mark.parametrize("prompt", SHAPES)
def test_every_parser_recognises_the_same_prompt(prompt):
    # nccl: the prompt line is a prompt (SUSE's "~>" was "not an NCCL line")
    res = nccl.parse((prompt + "torchrun --nproc_per_node 8 train.py\n").encode() + NCCL_LINE, ParseContext())
    assert res.unparsed["reason"].to_list() == ["shell prompt or command line (not an NCCL line)"]
    # ethtool: a command line
    assert command_at(prompt + "sudo ethtool -S eth0")
    # numactl (and every parser through _shell.take_shell_lines): the command is a fact in meta
    res = numactl.parse((prompt + "numactl -H\nnode 0 cpus: 0 1\nnode 0 size: 1 MB\n").encode(), ParseContext())
    assert res.unparsed.height == 0 and res.meta["commands"] == [{"line_no": 1, "command": prompt + "numactl -H"}]
    for tool in ("nvidia-smi", "sar", "iostat"):
        assert re.match(command_re(tool), prompt + tool + " -x 1")


@pytest.mark.parametrize("prompt", [s for s in SHAPES if "@" in s])
def test_the_host_a_prompt_names(prompt):
    # (the bracketed and environment shapes gave no host)
    assert PROMPT_HOST.match(prompt + "ethtool -S eth0").group(1) in {"host", "node1", "x4105c5s5b0n0"}


def test_runners_and_separators_are_the_same_for_every_tool():
    # ethtool knew nice, doas, exec and shell separators before a command; the others only sudo, time and watch
    for line in ("nice -n 5 sudo nvidia-smi -q", "for i in 1 2; do nvidia-smi -q; done", "x=$(nvidia-smi -L)"):
        line = line.replace("nice -n 5 ", "nice ")
        assert re.match(command_re("nvidia-smi"), line), line
        assert command_at(line.replace("nvidia-smi -q", "ethtool -S eth0").replace("nvidia-smi -L", "ethtool -S eth0"))


def test_prose_is_not_a_prompt():
    assert not re.match(command_re("nvidia-smi"), "Then I ran nvidia-smi to check")
    res = nccl.parse(b"# a comment\n" + NCCL_LINE, ParseContext())
    assert res.unparsed["reason"].to_list() == ["not an NCCL line"]
    assert PROMPT_HOST.match("mail me at user@example.org") is None
