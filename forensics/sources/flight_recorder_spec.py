"""PyTorch Flight Recorder dumps: what they feed (standard library only; see :mod:`forensics.descriptor`).
A job writes one dump per rank when a collective times out (``TORCH_NCCL_DUMP_ON_TIMEOUT=1``, files
``$TORCH_FR_DUMP_TEMP_FILE<rank>``, default ``/tmp/nccl_trace_rank_<rank>``); operators attach them
to tickets or give them to ``forensics parse``/``bundle``. No command prints them, so no Spec."""
from __future__ import annotations

from forensics.descriptor import Descriptor

DESCRIPTOR = Descriptor("flight_recorder", "PyTorch Flight Recorder dumps (pickle, read without running it; or JSON)")
