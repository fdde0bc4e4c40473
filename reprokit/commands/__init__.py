"""The front ends of the Invoke tasks: one module per group, holding its front ends, its tasks and its ``Collection``
(``ns``); ``reprokit.cli.tasks`` puts every group's tasks flat into the root, so a task's name is its command.

    run       repro, probe, sweep, collect, unlock: kit runs on hosts
    kits      kits (--check), new-kit, check-pins: the kits, checked, and a new one begun
    info      hosts, triage: what the inventory declares, and what a server log says (nothing is run)
    records   summary, check-record, runs, compare: the records of runs, read back
    smem      smem, bisect, fit-table: the static shared-memory analysis, no GPU needed
    fix       fix, report --upstream: the workaround, and the bug report for upstream
    setup     lint, build, lock, provision: the tree, the images and the hosts made ready
    ci        changed-kits, ci-verdict: the GitOps job's steps

A front end prints and returns an ``ExitCode`` (or raises a ``ReprokitError``); ``tasking.call`` turns both into the
task's exit. What they share: ``tasking`` (the task class, ``group``, ``call``, the config), ``console`` (where they
print), ``flags`` (the help of shared flags); ``fit_table`` is the fit table's ``python -m`` program. The modules below return data or raise typed errors
(``tests/unit/guards/test_front_ends.py``).
"""
