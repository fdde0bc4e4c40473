"""The command line, top of the tree: the programs (``program``: ``invoke`` here, the ``reprokit`` console command),
the root namespace of every group's tasks (``tasks``), Invoke's parser extended (``task_parser``) and the shell
completion of what the arguments name (``completion``). Nothing below imports it."""
