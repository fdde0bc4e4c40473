"""Reports for people: markdown (and, later, self-contained HTML) from a run record."""
