"""Training logs: what they feed (standard library only; see :mod:`forensics.descriptor`). A job's
own stdout/stderr is attached to a ticket or given to ``forensics parse``/``ingest`` as a file; no
command on the node prints it, so no Spec is declared here."""
from __future__ import annotations

from forensics.descriptor import Descriptor

DESCRIPTOR = Descriptor("train_log", "training logs (Megatron-LM, torchtitan, DeepSpeed, HF Trainer, PyTorch Lightning progress bars)")
