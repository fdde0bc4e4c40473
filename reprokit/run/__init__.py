"""A run's life above its phases, what the ``run`` and ``operate`` front ends call: one kit run told as its phases
(``kit_run``), the same preparation and planner with the launch left out (``dry_run``), finishing a run whose files
are still on the host (``collect``), and watching or stopping a run in flight (``in_flight``)."""
