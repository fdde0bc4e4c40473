"""The analysed sources of many flashinfer-python wheels in one file, for a host that cannot reach the index.

The static analysis reads a part of each wheel (``wheel.EXTRACT_PREFIXES``: the CUTLASS headers and the MoE
sources), and neighbouring releases share most of those files byte for byte. A bundle is an xz tar of the trees the
cache extracts (``static_smem/src/<sha256[:16]>/``), each distinct file stored once (the others as hard links in
the tar), with each wheel's sha256 record (``wheels/<wheel>.sha256``). Unpacked into a host's cache,
``wheel.fetch`` finds each release by its record; the cells and caches are keyed by the wheel's sha256, so the
results are those the wheels would give. The bundle is for hosts that have no index and a cap on what travels
(the fit table's 43 releases: 797 MB of wheels).

    python -m reprokit.workloads.static_smem.source_bundle pack BUNDLE VERSION [VERSION ...]   # where pip works
    python -m reprokit.workloads.static_smem.source_bundle unpack BUNDLE                     # on the host
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import tarfile
from pathlib import Path

from reprokit.workloads.contract import Exit, WorkloadError
from reprokit.workloads.static_smem import wheel as wheels


def pack(versions: list[str], bundle: Path, cache_dir: Path, preset: int = 9) -> dict[str, int]:
    """Write ``bundle`` (.tar.xz, xz ``preset``) with the extracted sources and sha256 records of ``versions``.

    Returns the counts: releases, files, distinct files and their bytes (before compression).
    """
    first_by_digest: dict[str, str] = {}
    counts = {"releases": 0, "files": 0, "distinct_files": 0, "distinct_bytes": 0}
    tmp = bundle.with_name(f".{bundle.name}.partial")
    with tarfile.open(tmp, "w:xz", preset=preset) as tar:
        for version in versions:
            found = wheels.fetch(version, cache_dir)
            record = wheels.sha256_record(Path("wheels") / wheels.wheel_file_name(version))
            text = (found.sha256 + "\n").encode()
            info = tarfile.TarInfo(str(record))
            info.size, info.mode = len(text), 0o644
            tar.addfile(info, io.BytesIO(text))
            for path in sorted(p for p in found.root.rglob("*") if p.is_file()):
                arcname = str(path.relative_to(cache_dir))
                data = path.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                counts["files"] += 1
                if digest in first_by_digest:
                    info = tarfile.TarInfo(arcname)
                    info.type, info.linkname, info.mode = tarfile.LNKTYPE, first_by_digest[digest], 0o644
                    tar.addfile(info)
                    continue
                first_by_digest[digest] = arcname
                counts["distinct_files"] += 1
                counts["distinct_bytes"] += len(data)
                tar.add(path, arcname=arcname)
            counts["releases"] += 1
    tmp.replace(bundle)
    return counts


def unpack(bundle: Path, cache_dir: Path) -> int:
    """Extract ``bundle`` into ``cache_dir``; returns the number of releases it staged."""
    with tarfile.open(bundle, "r:xz") as tar:
        members = tar.getmembers()
        tar.extractall(cache_dir, filter="data")
    return sum(1 for m in members if m.name.endswith(".whl.sha256"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.static_smem.source_bundle",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=wheels.default_cache_dir(),
                        help="the reprokit cache (default $REPROKIT_CACHE or ~/.cache/reprokit)")
    verbs = parser.add_subparsers(dest="verb", required=True)
    packing = verbs.add_parser("pack", help="bundle the sources of VERSIONs (downloads the wheels it lacks)")
    packing.add_argument("bundle", type=Path)
    packing.add_argument("versions", nargs="+")
    unpacking = verbs.add_parser("unpack", help="stage a bundle's sources in the cache")
    unpacking.add_argument("bundle", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.verb == "pack":
            counts = pack(args.versions, args.bundle, args.cache_dir)
            print(f"source bundle {args.bundle}: {counts['releases']} releases, {counts['files']} files, "
                  f"{counts['distinct_files']} distinct ({counts['distinct_bytes']} B), {args.bundle.stat().st_size} B")
        else:
            print(f"source bundle {args.bundle}: {unpack(args.bundle, args.cache_dir)} releases staged in {args.cache_dir}")
    except WorkloadError as exc:
        print(f"source bundle: {exc}", file=sys.stderr)
        return int(exc.code)
    except (OSError, tarfile.TarError) as exc:
        print(f"source bundle {args.bundle}: {exc}", file=sys.stderr)
        return int(Exit.MISSING_DEPENDENCY)
    return 0


if __name__ == "__main__":
    sys.exit(main())
