"""``python3 -m tests.doubles.libcuda``: build the double (once per source) and print where it is."""

from tests.doubles.libcuda import libcuda

print(libcuda())
