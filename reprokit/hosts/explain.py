"""One line for a command that failed on a host, whichever way the host is reached."""

from __future__ import annotations

from reprokit.config.inventory import Host


def explain_failure(host: Host, what: str, detail: str) -> str:
    """One line for a failed command: what failed and the host's last word, or what to do on a full disk."""
    lines = [line.strip() for line in detail.strip().splitlines() if line.strip()]
    full = [line for line in lines if "No space left on device" in line or "Disk quota exceeded" in line]
    detail = (full or lines or [""])[0 if full else -1]  # tar says why first, "Exiting with failure status" last
    if full:
        return (f"host '{host.name}': no space left in {host.workdir} ({detail});"
                " free space there or set a larger `workdir` for the host")
    return f"host '{host.name}': {what}: {detail}"


__all__ = ["explain_failure"]
