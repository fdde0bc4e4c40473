#!/bin/sh
# Written by reprokit: runs one step as a Slurm batch job (sbatch copies this script away: it goes to its directory).
# shellcheck disable=SC2317  # the confinement library's functions a job does not call (it sweeps; Slurm confines)
cd @STEP_DIR@ || exit 1
@LIBRARY@
write_exit_code @PLACEHOLDER@  # a requeued job starts again from here
take_secrets
# the mark on the workload only: the sweep's own tools must not carry it
# shellcheck disable=SC2016  # a container's command quotes the script of the shell it starts there
(export REPROKIT_RUN=@MARK@; @COMMAND@) > step.log 2>&1 < /dev/null
rc=$?
exec 3<&-
@CLEANUP@
# a child that led a session of its own escapes Slurm's kill without cgroup tracking: what carries the mark goes
sweep @MARK_PATTERN@ > /dev/null
write_exit_code "$rc"
exit "$rc"
