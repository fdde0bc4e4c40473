# shellcheck shell=sh
# What the session wrapper and the Slurm job script share (a library each inlines): the secrets and the exit code.

take_secrets() {  # the step's secrets: .secrets.sh into the environment, .secrets.env open on descriptor 3; both deleted
  # shellcheck source=/dev/null  # written by the control plane for this step, deleted at once
  if [ -f .secrets.sh ]; then set -a; . ./.secrets.sh; set +a; rm -f .secrets.sh; fi
  # docker reads its --env-file from this descriptor: the file is gone before any container starts
  if [ -f .secrets.env ]; then exec 3< .secrets.env; rm -f .secrets.env; fi
}

write_exit_code() {  # $1 the step's exit code (or the placeholder): overwritten in place, so a full disk cannot stop it
  printf '%-7s\n' "$1" 1<> exit_code
}
