"""The phases of a kit's run, one module each, in the order ``kit_run.run_kit`` tells them.

``prepare`` (images, executor, secrets, the host's lock, the record), ``preflight`` (the fingerprint and the checks of
the host against the inventory and the pins), ``steps`` (each step planned, launched, collected and checked),
``conclude`` (judge and report), ``ending`` (a run that ends otherwise: detached, incomplete, interrupted, failed);
``outcome`` is what the front end gets back, ``reporter`` the one voice of the run on the console. No phase sets a
field of the record: each says what happened (``records/events.py``) to the run's one writer, its ``Recorder``.
"""
