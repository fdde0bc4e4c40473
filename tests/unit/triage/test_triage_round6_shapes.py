"""The log shapes the corpus's sixth round missed at its first count, each on its real excerpt (tuning half, three of
them moved there): exact verdicts, rules, lines and families."""

from pathlib import Path

from reprokit.triage import triage_files
from reprokit.triage.parser import parse_lines

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def report(name: str) -> dict:
    return triage_files([REAL / f"{name}.log"]).to_json()


def test_a_vllm_parent_reporting_its_childs_death_is_a_death_notice():
    """'Worker proc X died unexpectedly' (the executor) and 'Engine core proc X died unexpectedly' (the core client)."""
    got = report("llm-scaler-154-compose-vllm-worker-died-after-health-200")
    assert (got["verdict"], got["decided_by"]["rule"]) == ("FATAL", "death_reported")
    assert (got["evidence"]["line"], got["fatal"]["family"]) == (2, "child_died")  # a second before the core's error
    got = report("ms-swift-7933-vllm-rollout-enginecore-dp1-died")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "death_reported", 1)
    assert got["fatal"]["family"] == "child_died"


def test_a_dead_engine_reported_by_its_caller_is_fatal_whatever_is_answered_after():
    """V0's 'Engine loop has died', then two 200s from the front end, then the launcher's CRITICAL: not READY."""
    got = report("vllm-10024-v0-engine-loop-died-then-200-then-critical")
    assert (got["verdict"], got["decided_by"]["rule"], got["fatal"]["family"]) == ("FATAL", "death_reported",
                                                                                  "engine_dead")
    assert got["evidence"]["line"] == 2  # RuntimeError('Engine loop has died')
    assert got["decided_by"]["location"].endswith(":12")  # MQLLMEngine is already dead, terminating server process
    assert got["readiness"]["by"] == "request_served"  # it was up; the death decides


def test_a_ray_serve_replica_prefix_and_an_engine_dead_error():
    got = report("ray-53267-serve-replica-vllm-engine-dead")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "death_reported", 2)
    assert got["fatal"]["family"] == "engine_dead"
    assert [(p["process"], p["role"]) for p in got["processes"]] == [
        ("ServeReplica:default:LLMDeploymentqwen-0_5b pid=14262", "serve_replica")]


def test_a_ray_serve_application_ready_is_a_readiness_banner_and_its_teardown_no_death():
    got = report("ray-55754-serve-llm-application-ready-then-test-teardown")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("READY", "ready_banner", 2)
    assert got["counts"]["lines_by_format"] == {"ray_serve": 6, "unknown": 1}  # 'PASSED(ServeReplica...' is pytest's
    assert {p["role"] for p in got["processes"]} == {"serve_replica", "serve_controller", "main"}
    events, stats = parse_lines(["INFO 2025-08-29 18:04:47,931 serve 519120 -- Application 'default' is ready at "
                                 "http://127.0.0.1:8000/."])
    assert [(e.kind, e.fields["app"], e.at_key) for e in events] == [("ray_serve_app_ready", "default",
                                                                  "08-29 18:04:47.931")]


def test_ucx_caught_signal_is_a_signal_cited_before_its_backtrace():
    got = report("qwen-trtllm-60-triton-backend-ucx-segfault-backtrace")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "death_reported", 3)
    assert got["fatal"]["family"] == "signal"


def test_vllms_route_listing_shows_the_server_up_below_its_banner():
    """The fifth round's known miss, tuned in the sixth: routes alone are readiness; a banner, where there is one, wins."""
    got = report("vllm-24578-apiserver-routes-only")
    assert (got["verdict"], got["decided_by"]["rule"], got["readiness"]["by"]) == ("READY", "ready_routes", "routes")
    assert (got["evidence"]["line"], got["phase"]) == (1, "ready")
    got = report("vllm-15016-routes-startup-complete-request")  # routes at lines 1-13, uvicorn's startup at 16
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("READY", "ready_banner", 16)
