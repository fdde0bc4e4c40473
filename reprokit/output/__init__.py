"""What reaches the person at the terminal, below every layer that tells them something: host text shown as data
(``hosttext``), the ``Say`` a module is given (``say``), what ``--quiet``/``--verbose`` mean (``verbosity``),
progress lines (``progress``) and secrets kept out of every log and record (``secrets``)."""
