"""The functions behind the Invoke tasks (``reprokit.tasks`` wires them), one module per group of tasks.

    run       repro, probe, sweep, collect, unlock: kit runs on hosts
    info      kits, hosts, triage: what is declared, and what a server log says (nothing is run)
    records   summary, check-record, runs, compare: the records of runs, read back
    setup     lint, build, lock, provision: the tree, the images and the hosts made ready
    ci        changed-kits, ci-verdict: the GitOps job's steps
    smem      smem: the static shared-memory analysis on this machine
    console   the console they print on
"""
