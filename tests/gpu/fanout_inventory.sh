#!/usr/bin/env bash
# fanout_inventory.sh HOSTS GPUS WORK SSH_PORT HOST_PY [GPU_ARCH]: the fan-out inventory of h200_over_ssh.sh on stdout.
# HOSTS inventory hosts g1..gHOSTS behind one sshd on 127.0.0.1, each with its own workdir (so its own lock) and
# pinned to one GPU of the machine's GPUS: host gI gets cuda_visible_devices (I-1) mod GPUS and gpu_count 1, so
# with as many GPUs as hosts every host has a GPU of its own, and with one GPU they all share GPU 0.
set -euo pipefail
hosts=$1 gpus=$2 work=$3 port=$4 host_py=$5 arch=${6:-sm90}
echo "all:"
echo "  vars:"
for kv in "ansible_host: 127.0.0.1" "ansible_port: $port" "ansible_user: root" \
          "ansible_ssh_private_key_file: $work/id_ed25519" "ansible_python_interpreter: $host_py" \
          "runtime: native" "gpu_arch: $arch" "gpu_count: 1" "ansible_become: false" "offline: true"; do
    echo "    $kv"
done
echo "  hosts:"
for i in $(seq 1 "$hosts"); do
    echo "    g$i:"
    echo "      workdir: $work/fan/g$i"
    echo "      cuda_visible_devices: \"$(( (i - 1) % gpus ))\""
done
echo "  children:"
echo "    fan:"
echo "      hosts:"
for i in $(seq 1 "$hosts"); do echo "        g$i:"; done
