"""Slurm: how its view of the job is collected (standard library only; see :mod:`forensics.descriptor`).

At the end of a capture, when the collector runs inside a Slurm job (``$SLURM_JOB_ID`` set, e.g.
started with ``srun`` in the job's allocation): ``scontrol show job -d $SLURM_JOB_ID`` (state,
reason, the node a NODE_FAIL names, node list, per-node CPUs and GPU indexes) and ``sacct -j
$SLURM_JOB_ID --parsable2`` (every step's state and exit code; ``FailedNode`` needs Slurm 23.02+, so
older ones are asked without it). Without ``$SLURM_JOB_ID`` both are recorded as skipped; on a node
without Slurm's commands, as failed (not found). Saved outputs (``squeue``, ``sacct`` tables,
``env | grep SLURM``) given to ``forensics parse``/``bundle`` are read the same way.
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, Spec, MB

_SACCT = "JobID,JobName,Partition,State,ExitCode,Elapsed,Start,End,NNodes,NTasks,AllocCPUS,NodeList"

DESCRIPTOR = Descriptor(
    "slurm", "Slurm (scontrol, squeue, sacct)",
    collect=(
        Spec("scontrol_job", ("scontrol", "show", "job", "-d", "{slurm_job_id}"), "slurm", "scontrol-show-job.txt",
             timeout=30, cap=4 * MB, when="end"),
        Spec("sacct_job", ("sacct", "-j", "{slurm_job_id}", "--parsable2", "--format=" + _SACCT + ",FailedNode"), "slurm",
             "sacct.txt", timeout=30, cap=4 * MB, when="end",
             fallbacks=(("sacct", "-j", "{slurm_job_id}", "--parsable2", "--format=" + _SACCT),)),
    ),
)
