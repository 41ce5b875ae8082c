"""NCCL logs: what the collector copies and what they feed (standard library only; see
:mod:`forensics.descriptor`). The collector copies the logs named by ``--nccl-log`` (default:
``$NCCL_DEBUG_FILE``) rather than running a command, so no Spec is declared here."""
from __future__ import annotations

from forensics.descriptor import Descriptor

DESCRIPTOR = Descriptor(
    "nccl", "NCCL",
    events=("nccl_version", "nccl_init_complete", "nccl_net", "nccl_gdr", "nccl_env", "nccl_ib_completion_error",
            "nccl_socket_error", "nccl_connect_error", "nccl_remote_closed", "nccl_error_chain", "nccl_abort",
            "nccl_error", "nccl_warn", "nccl_other", "watchdog_timeout", "watchdog_exception",
            "watchdog_last_enqueued", "watchdog_last_completed", "pytorch_exception", "pytorch_error",
            "process_terminate"),
)
