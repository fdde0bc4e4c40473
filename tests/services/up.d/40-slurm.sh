#!/usr/bin/env bash
# A real Slurm cluster (Debian 12's slurm-wlm 22.05 and munge) on this machine's test network:
#   controller  slurmctld on 10.213.0.1 (the bridge rkbr0 of 10-sshhosts.sh)
#   compute     slurmd -N c1 in netns rk-c1 (10.213.0.21), slurmd -N c2 in netns rk-c2 (10.213.0.22),
#               each with a GPU GRES of 4 on placeholder devices (/dev/null's kind; AutoDetect=off): no GPU behind them
#   login       sshd in netns rk-login (10.213.0.20) for rkuser (the test key), with sbatch/squeue/scancel
# Partitions: `debug` (default, both nodes), `parked` (State=DOWN: takes jobs, never starts them).
# No accounting database: sacct refuses, and the launcher falls back to `scontrol show job` (MinJobAge 3600 s).
# Every daemon reads /etc/slurm/slurm.conf and talks through the one munged of this machine (a Unix socket:
# network namespaces share the filesystem, as the test hosts share /srv/rk-hosts). Workdir: /srv/rk-hosts/login.
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services/slurm
SSH_STATE=$PWD/.cache/services/sshhosts
UNAVAILABLE=$PWD/.cache/services/slurm.unavailable
rm -f "$UNAVAILABLE"

unavailable() { echo "$1" > "$UNAVAILABLE"; echo "slurm unavailable: $1"; exit 0; }

[ "$(id -u)" = 0 ] || unavailable "needs root to start slurmctld, slurmd and munged"
[ -f "$SSH_STATE/id_ed25519" ] && ip link show rkbr0 >/dev/null 2>&1 \
  || unavailable "the SSH test hosts (10-sshhosts.sh) are not up: no rkbr0 or no test key"
if ! [ -x /usr/sbin/slurmctld ] || ! [ -x /usr/sbin/slurmd ] || ! [ -x /usr/sbin/munged ] || ! command -v sbatch >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge \
    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge; } \
    || unavailable "cannot install slurmctld, slurmd, slurm-client and munge"
fi
mkdir -p "$STATE"

# -- munge: one key, one daemon ------------------------------------------------------------------
[ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
install -d -o munge -g munge -m 755 /run/munge
install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged --force || unavailable "munged did not start"
  sleep 0.5
  munge -n | unmunge >/dev/null || unavailable "munged started but a credential does not round-trip"
fi

# -- namespaces: the compute nodes and the login node on the bridge --------------------------------
attach() {  # netns $1 on rkbr0 with address $2 (the veth on this side: $3)
  local ns=$1 addr=$2 veth=$3
  ip netns list | grep -qw "$ns" || ip netns add "$ns"
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip link set "$veth" master rkbr0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
  fi
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route replace default via 10.213.0.1 2>/dev/null || true
}
attach rk-c1 10.213.0.21 rkv-c1
attach rk-c2 10.213.0.22 rkv-c2
attach rk-login 10.213.0.20 rkv-login

# -- the cluster's configuration ---------------------------------------------------------------------
install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/log/slurm /var/spool/slurmd
cat > "$STATE/slurm.conf" <<'CFG'
# Written by reprokit's tests/services/up.d/40-slurm.sh
ClusterName=rk
SlurmctldHost=@CONTROLLER@(10.213.0.1)
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=3600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
GresTypes=gpu
NodeName=c1 NodeAddr=10.213.0.21 CPUs=4 RealMemory=2000 Gres=gpu:4 State=UNKNOWN
NodeName=c2 NodeAddr=10.213.0.22 CPUs=4 RealMemory=2000 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=c1,c2 Default=YES MaxTime=INFINITE State=UP
PartitionName=parked Nodes=c1,c2 MaxTime=INFINITE State=DOWN
CFG
sed -i "s/@CONTROLLER@/$(hostname -s)/" "$STATE/slurm.conf"  # slurmctld runs only where its name is this host's
cat > "$STATE/cgroup.conf" <<'CFG'
# the machine's cgroup v1 hierarchy; nothing is confined (proctrack/linuxproc, task/none)
CgroupPlugin=cgroup/v1
CFG
# slurm 22.05 drops a gpu GRES without File ("Removing file-less GPU"): four character devices of /dev/null's
# kind (1:3) stand in for /dev/nvidia0-3; task/none confines nothing to them, no GPU is behind them
install -d /var/lib/slurm/gpu-placeholders
for i in 0 1 2 3; do
  [ -c "/var/lib/slurm/gpu-placeholders/nvidia$i" ] || { rm -f "/var/lib/slurm/gpu-placeholders/nvidia$i"; mknod -m 666 "/var/lib/slurm/gpu-placeholders/nvidia$i" c 1 3; }
done
cat > "$STATE/gres.conf" <<'CFG'
# 4 GPUs per node by placeholder device (see 40-slurm.sh); nothing is detected
AutoDetect=off
NodeName=c[1-2] Name=gpu File=/var/lib/slurm/gpu-placeholders/nvidia[0-3]
CFG
mkdir -p /etc/slurm
changed=0
for f in slurm.conf gres.conf cgroup.conf; do
  cmp -s "$STATE/$f" "/etc/slurm/$f" || { install -m 644 "$STATE/$f" "/etc/slurm/$f"; changed=1; }
done
if [ "$changed" = 1 ]; then  # a new configuration: restart every daemon of the cluster on it
  [ -f /run/slurmctld.pid ] && kill "$(cat /run/slurmctld.pid)" 2>/dev/null || true
  for n in c1 c2; do [ -f "/run/slurmd-$n.pid" ] && kill "$(cat "/run/slurmd-$n.pid")" 2>/dev/null || true; done
  for _ in $(seq 1 50); do  # until they are gone, so none is taken for running below
    pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
    sleep 0.2
  done
fi

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
alive /run/slurmctld.pid || /usr/sbin/slurmctld || unavailable "slurmctld did not start (see /var/log/slurm/slurmctld.log)"
for n in c1 c2; do
  install -d "/var/spool/slurmd/$n"
    # nsenter enters only the network namespace: slurmd keeps this machine's /sys/fs/cgroup (ip netns exec remounts /sys)
  alive "/run/slurmd-$n.pid" || nsenter --net="/run/netns/rk-$n" /usr/sbin/slurmd -N "$n" \
    || unavailable "slurmd -N $n did not start (see /var/log/slurm/slurmd-$n.log)"
done

# -- the login node: an sshd for rkuser, host key of its own ------------------------------------------
install -d -o rkuser -g rkuser /srv/rk-hosts/login
dir=$STATE/login
mkdir -p "$dir" /run/sshd
[ -f "$dir/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C rk-login -f "$dir/ssh_host_ed25519_key"
cat > "$dir/sshd_config" <<CFG
ListenAddress 10.213.0.20
Port 22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers rkuser
UsePAM no
MaxStartups 100
MaxSessions 50
ClientAliveInterval 5
ClientAliveCountMax 3
LogLevel VERBOSE
Subsystem sftp /usr/lib/openssh/sftp-server
CFG
if ! { alive "$dir/sshd.pid" && cmp -s "$dir/sshd_config" "$dir/sshd_config.running"; }; then
  alive "$dir/sshd.pid" && kill "$(cat "$dir/sshd.pid")" && sleep 0.2
  cp "$dir/sshd_config" "$dir/sshd_config.running"
  ip netns exec rk-login /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log" || unavailable "the login node's sshd did not start"
fi

# -- smoke check: both nodes idle, and one job through the login node over SSH ---------------------------
for _ in $(seq 1 30); do
  idle=$(sinfo -h -p debug -t idle -o '%D' 2>/dev/null | head -1 || true)
  [ "${idle:-0}" = 2 ] && break
  scontrol update nodename=c1,c2 state=resume >/dev/null 2>&1 || true
  sleep 1
done
[ "${idle:-0}" = 2 ] || unavailable "the compute nodes did not come up idle: $(sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ';')"
opts=(-q -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 -i "$SSH_STATE/id_ed25519")
out=$(timeout 90 ssh "${opts[@]}" rkuser@10.213.0.20 'cd /srv/rk-hosts/login && sbatch --parsable --wait -N1 --gres=gpu:1 -t 1 -o /dev/null --wrap "hostname"' 2>&1) \
  || unavailable "a test job through the login node failed: $out"
echo "slurm up: controller 10.213.0.1, nodes c1 c2 (gpu:4 each), login 10.213.0.20; test job $out"
