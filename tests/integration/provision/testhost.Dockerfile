# A GPU-less test "host" for the provisioning tests: systemd as PID 1, sshd, sudo, python3 and python3-apt
# (what Ansible and its apt module's check mode need, as on a Debian server), with its own filesystem, so that
# ansible-playbook never touches the machine the tests run on.
# Built by tests/services/up.d/20-docker.sh on the debootstrapped Debian base, pinned by digest.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# A host keeps its apt lists (Ansible's apt module reads them in check mode), so they stay in this image.
# hadolint ignore=DL3008,DL3009
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      systemd systemd-sysv dbus openssh-server sudo python3-apt \
 && useradd --create-home --shell /bin/bash admin \
 && usermod -p '*' admin \
 && echo 'admin ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/admin \
 && chmod 0440 /etc/sudoers.d/admin \
 && install -d -m 700 -o admin -g admin /home/admin/.ssh \
 && systemctl enable ssh \
 && systemctl mask getty.target console-getty.service systemd-udevd.service systemd-udev-trigger.service \
      systemd-logind.service systemd-timesyncd.service

STOPSIGNAL SIGRTMIN+3
CMD ["/lib/systemd/systemd"]
