"""Planning: what a kit runs on a host, in which order, with which parameters."""
