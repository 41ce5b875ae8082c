"""CPU time of whole short `forensics` commands (start-up, imports, a small paste): this tree against a git revision.

The fixed cost every command pays (importing the CLI and its libraries, finding the parsers) is what a
user waits on for a paste or a small bundle. Each command runs as ``python -m forensics ...`` in its own
process with the side's ``forensics/`` first on ``PYTHONPATH`` (the revision's ``forensics/``, ``schemas/``
and ``queries/`` from ``git archive`` in a temporary folder); its CPU time is the child's user + system
(``os.wait4``). Rounds alternate A B B A ... (A = the baseline), one untimed warm-up per side and command
first; the 1-minute load average is printed after each round.

Bytecode: by default the environment decides (this machine sets ``PYTHONDONTWRITEBYTECODE=1``, so every
process compiles the project's source); ``--pyc`` gives each side its own ``PYTHONPYCACHEPREFIX`` and
lets Python write bytecode there, as an installed package has it.

    python benchmarks/startup_ab.py --baseline 8a23e02
    python benchmarks/startup_ab.py --baseline main --rounds 3 --pyc -- --help "analyze tests/fixtures/dmesg/X.txt"
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PASTE = "tests/fixtures/dmesg/dmesg--chinaunix-proc-kmsg-records-run-together-usb-camera.txt"
DEFAULT_COMMANDS = ["--help", "sources", f"parse --source dmesg {_PASTE}", f"analyze {_PASTE}"]


def _extract(rev: str, into: Path) -> None:
    tar = into / "rev.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "forensics", "schemas", "queries"],
                       stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(into, filter="data")


def _cpu(tree: Path, command: str, env: dict[str, str]) -> float:
    """User + system CPU seconds of one ``python -P -m forensics COMMAND`` (-P: the working folder, this
    checkout, is not put before PYTHONPATH; output dropped; it must succeed)."""
    args = [sys.executable, "-P", "-m", "forensics", *shlex.split(command)]
    proc = subprocess.Popen(args, cwd=str(ROOT), env={**env, "PYTHONPATH": str(tree)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # analyze exits 1 when it has findings
        raise SystemExit(f"{command!r} under {tree} exited {code}: {err.decode(errors='replace')[-800:]}")
    return ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="git revision to compare with")
    ap.add_argument("--rounds", type=int, default=2, help="rounds per side (A B B A ...)")
    ap.add_argument("--pyc", action="store_true", help="bytecode written and reused (own cache per side)")
    ap.add_argument("commands", nargs="*", help="forensics command lines, quoted (default: %(default)s)",
                    default=DEFAULT_COMMANDS)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        _extract(a.baseline, base)
        sides = {"baseline": base, "this": ROOT}
        envs = {}
        for side in sides:
            env = {**os.environ, "POLARS_MAX_THREADS": "1", "FORENSICS_CACHE_DIR": str(Path(tmp) / f"cache-{side}")}
            if a.pyc:
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / f"pyc-{side}")
            envs[side] = env
        for side, tree in sides.items():  # each side imports its own tree's forensics
            got = subprocess.run([sys.executable, "-P", "-c", "import forensics; print(forensics.__file__)"],
                                 cwd=str(ROOT), env={**envs[side], "PYTHONPATH": str(tree)},
                                 capture_output=True, text=True, check=True).stdout.strip()
            if not Path(got).is_relative_to(tree):
                raise SystemExit(f"{side}: imports {got}, not the tree {tree}")
        cpu: dict[tuple[str, str], list[float]] = {}
        loads = [os.getloadavg()[0]]
        for command in a.commands:
            for side, tree in sides.items():
                _cpu(tree, command, envs[side])  # warm-up: caches, bytecode, the OS's page cache
        for i in range(a.rounds):
            order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
            for side, tree in order:
                for command in a.commands:
                    cpu.setdefault((side, command), []).append(_cpu(tree, command, envs[side]))
            loads.append(os.getloadavg()[0])
    print(f"bytecode: {'written and reused (--pyc)' if a.pyc else 'as the environment sets it'}"
          f" (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}); POLARS_MAX_THREADS=1\n")
    print(f"| command | baseline ({a.baseline}) CPU s per round | this tree CPU s per round | ratio of means |")
    print("|---|---|---|---|")
    for command in a.commands:
        b, t = cpu[("baseline", command)], cpu[("this", command)]
        print(f"| `forensics {command}` | {' / '.join(f'{x:.2f}' for x in b)} | "
              f"{' / '.join(f'{x:.2f}' for x in t)} | {sum(t) / sum(b):.2f} |")
    print(f"\nOrder A B B A (A = baseline); 1-minute load average before and after each round: "
          f"{' '.join(f'{x:.1f}' for x in loads)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
