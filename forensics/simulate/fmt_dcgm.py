"""``dcgmi diag -r 1`` of a simulated node, as DCGM 3.3.8 prints it (tests/fixtures/dcgm: the 8x H100
run of an NVIDIA/nccl issue and the p4d run): the Metadata section (DCGM version, the driver, the
GPUs' PCI device ids: 2330 for the H100 80GB HBM3 SXM), then the nine Deployment checks of level 1.
A GPU whose row remapping is pending when the diagnostic runs fails "Page Retirement/Row Remap" with
DCGM's message for it (dcgm_errors.h ``DCGM_FR_PENDING_ROW_REMAP_MSG``), cut every 45 characters
as dcgmi cuts every message.
"""
from __future__ import annotations

from forensics.simulate.config import DRIVER

DCGM_VERSION = "3.3.8"
DEVICE_ID = "2330"
WRAP = 45
DEPLOYMENT = ("Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
              "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom")
BORDER = "+---------------------------+------------------------------------------------+"


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |"


def _message(kind: str, text: str) -> list[str]:
    pieces = [text[i:i + WRAP] for i in range(0, len(text), WRAP)]
    return [_row(kind if k == 0 else "", p) for k, p in enumerate(pieces)]


def diag_r1(plan, h: int, n_gpus: int, t: float) -> bytes:
    """The level-1 run at true time t on host h."""
    pending = sorted(g for (hh, g), events in plan.ecc.items() if hh == h
                     and any(at <= t and e.get("pending") for at, e in events))
    out = ["Successfully ran diagnostic for group.", BORDER, _row("Diagnostic", "Result"),
           "+===========================+================================================+",
           "|-----  Metadata  ----------+------------------------------------------------|",
           _row("DCGM Version", DCGM_VERSION), _row("Driver Version Detected", DRIVER),
           _row("GPU Device IDs Detected", ",".join([DEVICE_ID] * n_gpus)),
           "|-----  Deployment  --------+------------------------------------------------|"]
    for test in DEPLOYMENT:
        if test == "Page Retirement/Row Remap" and pending:
            out.append(_row(test, "Fail"))
            for g in pending:
                out += _message("Error", f"GPU {g} had memory errors and row remappings are pending")
        else:
            out.append(_row(test, "Pass"))
    out.append(BORDER)
    return ("\n".join(out) + "\n").encode()
