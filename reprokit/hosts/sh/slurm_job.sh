#!/bin/sh
# Written by reprokit: runs one step as a Slurm batch job (sbatch copies this script away: it goes to its directory).
@LIBRARY@
cd @STEP_DIR@ || exit 1
write_exit_code @PLACEHOLDER@  # a requeued job starts again from here
take_secrets
@COMMAND@ > step.log 2>&1 < /dev/null
rc=$?
exec 3<&-
@CLEANUP@
write_exit_code "$rc"
exit "$rc"
