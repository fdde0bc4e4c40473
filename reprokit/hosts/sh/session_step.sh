#!/bin/sh
# Written by reprokit: runs one step detached from the SSH session.
# `sh run.sh` is the wrapper; `sh run.sh step [DIR]` the step itself, which the wrapper starts in its cgroup (a
# systemd scope, or DIR) and marks with its run and step.
cd "$(dirname "$0")" || exit 1
@LIBRARY@
mark="$(basename "$(dirname "$PWD")")/$(basename "$PWD")"
if [ "$1" = step ]; then
  if [ "$2" = systemd ]; then sed -n "s,^0::,$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts),p" /proc/self/cgroup > cgroup
  elif [ -n "$2" ] && echo $$ > "$2/cgroup.procs"; then echo "$2" > cgroup; fi
  export REPROKIT_RUN="$mark"
  # shellcheck disable=SC2016  # a container's command quotes the script of the shell it starts there
  exec timeout --kill-after=@KILL_AFTER_S@ @TIMEOUT_S@ @COMMAND@ > step.log 2>&1 < /dev/null
fi
echo $$ > pid
take_secrets
# shellcheck disable=SC2046  # the confinement's words: its kind, and its directory
set -- $(confinement /proc/self/mounts /proc/self/cgroup)
case "$1" in
  systemd) systemd-run --user --scope --quiet -- sh run.sh step systemd ;;
  cgroup) if mkdir "$2/reprokit-$$" 2>/dev/null; then sh run.sh step "$2/reprokit-$$"; else sh run.sh step; fi ;;
  *) sh run.sh step ;;
esac
rc=$?
exec 3<&-
@CLEANUP@
# a finished step leaves nothing behind: its cgroup, what carries its mark, what is left in this session
reap "$(printf %s "$mark" | sed 's/\./\\./g')" . > /dev/null
for p in $(pgrep -s $$); do [ "$p" = "$$" ] || kill -KILL "$p" 2>/dev/null; done
write_exit_code "$rc"
