"""``reprokit.io_timeout_s`` (``INVOKE_REPROKIT_IO_TIMEOUT_S``): a site setting read like the pull caps, checked."""

from __future__ import annotations

import pytest

from reprokit.commands.run import connect_options
from reprokit.errors import ConfigError
from reprokit.hosts.transport import IO_TIMEOUT_S

PATHS = {"known_hosts": "/nonexistent/known_hosts", "ssh_config": None, "max_pull_bytes": None, "max_pull_files": None}


def test_the_io_timeout_is_the_default_unless_set():
    assert connect_options({**PATHS, "io_timeout_s": None}, False).io_timeout_s == IO_TIMEOUT_S == 30
    assert connect_options({**PATHS, "io_timeout_s": "10"}, False).io_timeout_s == 10.0


@pytest.mark.parametrize("value", ["0", "soon", "-5", "7200"])
def test_a_bad_io_timeout_is_one_line(value):
    with pytest.raises(ConfigError) as bad:
        connect_options({**PATHS, "io_timeout_s": value}, False)
    assert str(bad.value) == (f"reprokit.io_timeout_s {value!r}: give a number of seconds from 1 to 3600, such as 30")
