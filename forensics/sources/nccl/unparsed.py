"""Lines that are neither NCCL nor PyTorch lines: structure (blank, prefix only) or unparsed with a reason."""
from __future__ import annotations

import polars as pl
from forensics.sources._shell import RE_PROMPT
from forensics.sources.nccl.patterns import _LAUNCHER, _PREFIX_ONLY


# --- lines that are neither -----------------------------------------------------------------------
# a shell prompt as pasted ("user@host:~$ cmd", "[user@host dir]$ cmd", "(base) ...", a bare "$ cmd"): the shapes
# every parser recognises (forensics.sources._shell)
_PROMPT = r"^" + RE_PROMPT
# the line that ends a Python traceback: "RuntimeError: NCCL error in: ...", "torch.distributed.DistBackendError: ...",
# "KeyboardInterrupt"
_TRACEBACK_END = (r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception|Interrupt|Exit|Warning)"
                  r"(?:: .*)?$")
# Open MPI's help-message frames ("-----...-----" rules, "WARNING: There was an error initializing an OpenFabrics
# device.", "  Local host:   node1"), its aggregation notes ("[node1:12345] 1 more process has sent help message
# help-mpi-btl-openib.txt / error in device init", "Set MCA parameter ..."), mpirun's exit reports
_MPI = (r"^(?:-{20,}\s*$|={20,}\s*$|\[[A-Za-z0-9_.-]+:[0-9]+\] |(?:mpirun|mpiexec|orterun|prterun|prte|hydra_pmi_proxy)"
        r"(?: noticed| detected| has exited| was unable|:)|Primary job +terminated|Set MCA parameter|(?:WARNING|ERROR): "
        r"(?:There (?:was|were|is|are)|No OpenFabrics|It appears|A high-performance|The OpenFabrics|Open MPI)"
        r"|  (?:Local host|Local device|Local port|Host|Process name|Exit code|Node|PID|Error): )")
FRAME_REASON = "C++ stack frame of a PyTorch exception (not an NCCL line)"
TRACEBACK_REASON = "Python traceback (not an NCCL line)"
EXCEPTION_REASON = "Python exception line (not an NCCL line)"
# the stack an error was raised on, printed under it (c10's "frame #N:" lines under "Exception raised from", Python's
# traceback above its exception line): the error's context, skipped and counted as CONTEXT, not unparsed; the
# exception line itself ("RuntimeError: CUDA out of memory") says what happened and stays unparsed where no row took it
CONTEXT_REASONS = (FRAME_REASON, TRACEBACK_REASON)
CONTEXT = ("C++ stack frame or Python traceback line: the stack the error printed with it was raised on (no NCCL "
           "fields)")
MPI_REASON = "MPI launcher banner or message (Open MPI, MPICH, PRRTE; not an NCCL line)"
# Slurm's own lines: "srun: job 1234 queued and waiting for resources", "slurmstepd: error: *** STEP 12.0 ON n1
# CANCELLED AT ... ***", "srun: error: node1: task 0: Exited with exit code 1"
_SLURM = r"^(?:srun|salloc|sbatch|slurmstepd(?:-[A-Za-z0-9_.-]+)?): "


def _reason() -> pl.Expr:
    b = pl.col("_b")
    return (pl.when(b.str.contains(r"^\s*# ?(?:nThread|Using devices|\s*Rank +[0-9]+ |Out of bounds|Avg bus bandwidth"
                                   r"|\s*size +count|\s*\(B\)|\s+out-of-place|$)"))
            .then(pl.lit("nccl-tests header or summary (not an NCCL debug line)"))
            .when(b.str.contains(r"^\s+[0-9]+ +[0-9]+ +[a-z0-9_]+ +[a-z]+ +(?:-?[0-9]+ +)?[0-9.]+ "))
            .then(pl.lit("nccl-tests result row (not an NCCL debug line)"))
            .when(b.str.contains(r"^\s*frame #[0-9]+: "))
            .then(pl.lit(FRAME_REASON))
            # (and the carets under a traceback's source line: "           ^^^^^^^^^", "    ~~~~^^^^")
            .when(b.str.starts_with("Traceback (most recent call last)") | b.str.starts_with("  File \"")
                  | b.str.contains(r"^\s+[~^]{3,}\s*$"))
            .then(pl.lit(TRACEBACK_REASON))
            .when(b.str.contains(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} "))
            .then(pl.lit("vLLM log line (not an NCCL line)"))
            .when(b.str.contains(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8},[0-9]{3}\t?\s*(?:DEBUG|INFO|WARNING|ERROR) [a-z_]+\.py:[0-9]+ -- "))
            .then(pl.lit("Ray log line (not an NCCL line)"))
            # glog as PyTorch's Python logging and c10 print it: "W0714 23:06:54.603780 140446678845248 torch/distributed/run.py:757] "
            .when(b.str.contains(r"^[IWEF][0-9]{4}(?:[0-9]{4})? [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+ +[0-9]+ [^ \]]+:[0-9]+\] "))
            .then(pl.lit("PyTorch/torchrun log line (not an NCCL line)"))
            .when(b.str.contains(_PROMPT))
            .then(pl.lit("shell prompt or command line (not an NCCL line)"))
            .when(b.str.contains(_TRACEBACK_END))
            .then(pl.lit(EXCEPTION_REASON))
            .when(b.str.contains(_MPI))
            .then(pl.lit(MPI_REASON))
            .when(b.str.contains(_SLURM))
            .then(pl.lit("Slurm message (srun, slurmstepd, salloc; not an NCCL line)"))
            .when(b.str.contains(r"NCCL (?:INFO|WARN|TRACE)|WorkNCCL|[Ww]atchdog|ProcessGroupNCCL|NCCL work|what\(\)"))
            .then(pl.lit("NCCL/PyTorch text without a recognised header (wrapped or partial line)"))
            .otherwise(pl.lit("not an NCCL line"))).alias("reason")


_REASON = _reason()
_STRUCT = ((pl.col("text").str.strip_chars() == "") | pl.col("text").str.contains(_PREFIX_ONLY)).alias("_struct")


def _other_reasons(o: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(structure lines: blank / prefix only, unparsed lines with a reason)."""
    o = o.with_columns(pl.col("text").fill_null("")).with_columns(_STRUCT)
    is_struct = o.get_column("_struct")
    structure = o.filter(is_struct)
    # the reason is read behind a mail quote ("> ") and a launcher prefix
    rest = o.filter(~is_struct).with_columns(
        pl.col("text").str.replace(r"^(?:> ?)+", "").str.replace(_LAUNCHER, "").alias("_b"))
    rest = rest.sort("line_no").with_columns(_REASON)
    # a traceback's source line ("    dist.all_reduce(t)") right under its '  File "...", line N' line
    code = (pl.col("_b").str.starts_with("    ") & (pl.col("line_no").shift(1) == pl.col("line_no") - 1)
            & pl.col("_b").shift(1).str.starts_with('  File "')).fill_null(False)
    # the text of an Open MPI help message between its two "-----" rules ("By default, for Open MPI 4.0 and later,
    # infiniband ports on a device / are not used by default. ..."), the rules paired in order
    rule = pl.col("_b").str.contains(r"^-{20,}\s*$")
    inside = ((rule.cast(pl.Int32).cum_sum() % 2 == 1) & ~rule & (pl.col("reason") == "not an NCCL line")
              & (rule.sum() >= 2))
    rest = rest.with_columns(pl.when(code).then(pl.lit(TRACEBACK_REASON))
                             .when(inside).then(pl.lit(MPI_REASON))
                             .otherwise(pl.col("reason")).alias("reason"))
    return structure, rest.select("line_no", "text", "reason")
