"""The help texts of the flags that tasks of several groups share (their ``help=``), written once."""

from __future__ import annotations

SSH_HELP = {
    "known-hosts": "known_hosts file that host keys are verified against (default: config reprokit.known_hosts,"
                   " .reprokit/known_hosts)",
    "accept-new-host-key": "trust a host seen for the first time and save its key (a changed key still fails)",
    "ssh-config": "OpenSSH client config to honour (default: config reprokit.ssh_config, else ~/.ssh/config);"
                  " 'none' ignores every file",
}
INVENTORY_HELP = {"inventory": "Ansible inventory: YAML or INI file, or a directory (default: config reprokit.inventory)"}
JSON_HELP = {"json": "print the result as JSON on stdout"}
RUNS_DIR_HELP = "where run records are written (default: config reprokit.runs_dir)"
KITS_DIR_HELP = "directory of kit files (default: config reprokit.kits_dir)"
RUN_HELP = {
    "host": "inventory host to run on (default: local, this machine)",
    "group": "inventory group: run on all its hosts in parallel",
    "limit": "an Ansible host pattern (e.g. 'blackwell:!rtx-02'): run on the hosts it selects, in parallel",
    "runs-dir": RUNS_DIR_HELP,
    "kits-dir": KITS_DIR_HELP,
    "only": "run only this step (repeatable); the others are recorded as not selected",
    "skip": "do not run this step (repeatable)",
    "set": "STEP.KEY=VALUE: override one `with:` parameter of a step (repeatable; VALUE is YAML)",
    **INVENTORY_HELP, **JSON_HELP, **SSH_HELP,
}
