# shellcheck shell=sh
# A step's confinement, in the host's shell (a library: the step wrapper inlines it; reap and stop run it).
# Where the host lets this user have a cgroup (a systemd user manager's scope, or a cgroup v2 directory the user may
# write) the step runs in one of its own, killed whole when it ends. Everywhere, the step's processes carry
# REPROKIT_RUN=<run id>/<step> in their environment, and a sweep of /proc kills every process of this user that
# still carries it (a cgroup escapes nothing; the mark escapes `env -i`).
cgroup_parent() {  # $1 a mounts file, $2 a cgroup file: the cgroup v2 directory this user may nest one in
  mnt=$(awk '$3 == "cgroup2" { print $2; exit }' "$1" 2>/dev/null)
  rel=$(sed -n 's/^0:://p' "$2" 2>/dev/null)
  [ -n "$mnt" ] && [ -n "$rel" ] || return 1
  dir="$mnt${rel%/}"
  [ -d "$dir" ] && [ -w "$dir" ] && [ -w "$dir/cgroup.procs" ] || return 1
  echo "$dir"
}
confinement() {  # $1 a mounts file, $2 a cgroup file: systemd, cgroup DIR or proc (the sweep only)
  if systemd-run --user --scope --quiet true >/dev/null 2>&1; then echo systemd
  elif dir=$(cgroup_parent "$1" "$2"); then echo "cgroup $dir"
  else echo proc; fi
}
kill_cgroup() {  # $1 a cgroup v2 directory: kill everything in it, wait until it is empty, remove it; print who is left
  [ -d "$1" ] || return 0
  [ -f "$1/cgroup.kill" ] && echo 1 > "$1/cgroup.kill" 2>/dev/null
  i=0
  while pids=$(cat "$1/cgroup.procs" 2>/dev/null) && [ -n "$pids" ] && [ "$i" -lt 50 ]; do
    # shellcheck disable=SC2086  # one word per pid
    kill -KILL $pids 2>/dev/null; i=$((i + 1)); sleep 0.1
  done
  rmdir "$1" 2>/dev/null || cat "$1/cgroup.procs" 2>/dev/null
  return 0
}
marked() {  # $1 an ERE of marks: the pids of this user's processes that carry one
  grep -lsazE "^REPROKIT_RUN=$1\$" /proc/[0-9]*/environ 2>/dev/null | sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p'
}
sweep() {  # $1 an ERE of marks: kill every marked process until none is left; print who is left
  i=0
  while pids=$(marked "$1") && [ -n "$pids" ] && [ "$i" -lt 50 ]; do
    # shellcheck disable=SC2086  # one word per pid
    kill -KILL $pids 2>/dev/null; i=$((i + 1)); sleep 0.1
  done
  marked "$1"
}
reap() {  # $1 an ERE of marks, then step directories: kill their cgroups and sweep; print how many are left
  marks=$1; shift
  { for d in "$@"; do [ -f "$d/cgroup" ] && kill_cgroup "$(cat "$d/cgroup")"; done; sweep "$marks"; } | sort -u | wc -l
}
