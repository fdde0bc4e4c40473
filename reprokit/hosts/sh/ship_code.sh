# shellcheck shell=sh
# Written by reprokit: the workload code's archive, uploaded beside its directory, unpacked into place once per digest.
# Unpacked first into a directory of this run's own, then renamed into place: two runs of one workdir (a --nodes
# fan-out) may ship the same code at the same time; the first rename wins, the other finds the code complete.
staged=@STAGED@
archive=@ARCHIVE@
code_dir=@CODE_DIR@
{ rm -rf -- "$staged" && mkdir -p -- "$staged" && tar -xzf "$archive" -C "$staged" && touch -- "$staged/.complete" \
  && { test -f "$code_dir/.complete" || { rm -rf -- "$code_dir" && mv -T -- "$staged" "$code_dir"; }; }; }
status=$?
# the unpacking's status is the script's: the clean-up after it must not turn a failed tar into success
rm -rf -- "$staged" "$archive"
exit "$status"
