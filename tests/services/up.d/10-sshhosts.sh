#!/usr/bin/env bash
# SSH test hosts: real OpenSSH servers, each in its own network namespace with its own address.
#   rk-h1 .. rk-h8   10.213.0.11-18 on bridge rkbr0 (this machine is 10.213.0.1)
#   rk-gw            10.213.0.2, and 10.214.0.1 towards the private host
#   rk-priv          10.214.0.10, reachable only through rk-gw (no route from this machine)
# Login: user `rkuser` with the key in .cache/services/sshhosts/id_ed25519. Host keys are per host, in
# .cache/services/sshhosts/<host>/. Each host's workdir is /srv/rk-hosts/<host> (they share this filesystem).
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services/sshhosts
UNAVAILABLE=$PWD/.cache/services/sshhosts.unavailable
HOSTS=(h1 h2 h3 h4 h5 h6 h7 h8)

unavailable() { echo "$1" > "$UNAVAILABLE"; echo "sshhosts unavailable: $1"; exit 0; }

[ "$(id -u)" = 0 ] || unavailable "needs root to create network namespaces"
if ! [ -x /usr/sbin/sshd ] || ! command -v ip >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server openssh-client iproute2 \
    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server openssh-client iproute2; } \
    || unavailable "cannot install openssh-server"
  # Debian starts its own sshd on install where it can; the tests do not use it.
fi
ip netns add rk-probe-$$ 2>/dev/null && ip netns del rk-probe-$$ || unavailable "network namespaces are not permitted here"

mkdir -p "$STATE" /run/sshd
id rkuser >/dev/null 2>&1 || useradd --create-home --shell /bin/bash rkuser
usermod -p '*' rkuser  # no password, but not locked: sshd refuses locked accounts without PAM
# The test hosts run workloads in Docker through this machine's engine (tests/services/up.d/20-docker.sh):
# create its group now, so the engine's package adopts it and rkuser can reach the socket.
groupadd -f docker
usermod -aG docker rkuser
[ -f "$STATE/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C reprokit-tests -f "$STATE/id_ed25519"
install -d -m 700 -o rkuser -g rkuser ~rkuser/.ssh
install -m 600 -o rkuser -g rkuser "$STATE/id_ed25519.pub" ~rkuser/.ssh/authorized_keys

addr_of() { case $1 in gw) echo 10.213.0.2;; priv) echo 10.214.0.10;; h*) echo "10.213.0.$((10 + ${1#h}))";; esac; }

if ! ip link show rkbr0 >/dev/null 2>&1; then
  ip link add rkbr0 type bridge
  ip addr add 10.213.0.1/24 dev rkbr0
fi
ip link set rkbr0 up

attach() {  # attach netns rk-$1 to the bridge with address $2
  local ns=rk-$1 addr=$2
  ip netns list | grep -qw "$ns" || ip netns add "$ns"
  if ! ip link show "rkv-$1" >/dev/null 2>&1; then
    ip link add "rkv-$1" type veth peer name eth0 netns "$ns"
    ip link set "rkv-$1" master rkbr0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
  fi
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route replace default via 10.213.0.1 2>/dev/null || true
}

for h in "${HOSTS[@]}" gw; do attach "$h" "$(addr_of "$h")"; done
# The private host hangs off the gateway only.
ip netns list | grep -qw rk-priv || ip netns add rk-priv
if ! ip -n rk-gw link show gw-priv >/dev/null 2>&1; then
  ip -n rk-gw link add gw-priv type veth peer name eth0 netns rk-priv
  ip -n rk-gw addr add 10.214.0.1/24 dev gw-priv
  ip -n rk-priv addr add 10.214.0.10/24 dev eth0
fi
ip -n rk-gw link set gw-priv up
ip -n rk-priv link set lo up
ip -n rk-priv link set eth0 up

start_sshd() {
  local h=$1 addr; addr=$(addr_of "$h")
  local dir=$STATE/$h
  mkdir -p "$dir"
  [ -f "$dir/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "rk-$h" -f "$dir/ssh_host_ed25519_key"
  install -d -o rkuser -g rkuser "/srv/rk-hosts/$h"
  cat > "$dir/sshd_config" <<CFG
ListenAddress $addr
Port 22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers rkuser
UsePAM no
AllowTcpForwarding yes
MaxStartups 100
MaxSessions 50
ClientAliveInterval 5
ClientAliveCountMax 3
LogLevel VERBOSE
Subsystem sftp /usr/lib/openssh/sftp-server
CFG
  if [ -f "$dir/sshd.pid" ] && kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null; then
    cmp -s "$dir/sshd_config" "$dir/sshd_config.running" && return
    kill "$(cat "$dir/sshd.pid")"; sleep 0.2
  fi
  # An sshd this state does not know (another checkout's, a stale one) would keep the address with other keys.
  ip netns pids "rk-$h" | xargs -r kill 2>/dev/null; sleep 0.2
  cp "$dir/sshd_config" "$dir/sshd_config.running"
  ip netns exec "rk-$h" /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
}

for h in "${HOSTS[@]}" gw priv; do start_sshd "$h"; done

# Smoke check: one real login through the gateway to the private host.
# (The test's own client trusts any key here; the kit's clients verify keys against files the tests write.)
opts=(-q -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 -i "$STATE/id_ed25519")
ssh "${opts[@]}" -o ProxyCommand="ssh ${opts[*]} -W %h:%p rkuser@10.213.0.2" rkuser@10.214.0.10 true \
  || unavailable "sshd started but a login through the gateway failed"
echo "sshhosts up: ${HOSTS[*]} gw priv"
