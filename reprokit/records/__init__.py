"""Run records: ``runs/<id>/`` with an atomically written manifest and hashed artifacts."""

from reprokit.records.run_dir import RunRecord, load_manifest, new_run_id, verify_record

__all__ = ["RunRecord", "load_manifest", "new_run_id", "verify_record"]
