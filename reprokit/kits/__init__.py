"""Kits as a whole, what the ``kits`` front ends call: the checks beyond the schema (``kit_check``), a new kit's
skeleton (``new_kit``), the catalogue of cases (``catalogue``) and the pins against the wheels' own metadata
(``pins``). The kit's schema and loading stay in ``reprokit/config/``."""
