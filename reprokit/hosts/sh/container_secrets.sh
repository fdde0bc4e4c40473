# shellcheck shell=sh
# The first process of a container whose step has secrets: `sh -c` of this, $0 the secrets tmpfs, then the
# workload and its arguments. The NAME=value lines on its stdin (descriptor 3 of the wrapper) become files NAME,
# mode 0400, never its environment (docker inspect and /proc/1/environ show that); then the workload replaces it.
umask 077
while IFS= read -r line; do
  [ -n "$line" ] && printf %s "${line#*=}" > "$0/${line%%=*}"
done
chmod 0400 "$0"/* 2>/dev/null
exec "$@"
