"""The log shapes the corpus's seventh round missed at its first count, each on its real excerpt (tuning half, two of
them moved there): exact verdicts, rules, lines and families; and the line model's new pieces on single lines."""

from pathlib import Path

from reprokit.triage import formats, triage_files
from reprokit.triage.parser import parse_lines

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def report(name: str) -> dict:
    return triage_files([REAL / f"{name}.log"]).to_json()


def test_sglangs_scheduler_watchdog_is_a_death_and_so_is_the_shells_killed():
    """Every rank's 'Watchdog timeout', the launcher's 'Received sigquit from a child proces.' (sglang's spelling then),
    the shell's 'Killed': FATAL at the first watchdog line by time, the last death notice deciding."""
    got = report("sglang-3752-scheduler-watchdog-timeout-sigquit-killed")
    assert (got["verdict"], got["decided_by"]["rule"]) == ("FATAL", "death_reported")
    assert (got["evidence"]["line"], got["fatal"]["family"]) == (1, "scheduler_watchdog_timeout")
    assert got["decided_by"]["location"].endswith(":10")  # Killed
    assert got["fatal"]["count_by_kind"] == {"sglang_watchdog_timeout": 8, "sigquit_from_child": 1, "shell_killed": 1}  # 8 ranks
    assert got["counts"]["unknown_lines"] == 0
    events, _ = parse_lines(["[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child "
                             "failed.", "[2025-03-09 00:57:20] Received sigquit from a child process. It usually means "
                             "the child failed."])
    assert [e.kind for e in events] == ["sigquit_from_child", "sigquit_from_child"]


def test_lemonades_wrapper_is_stripped_and_a_hip_oom_is_an_oom():
    got = report("vllm-rocm-5-lemonade-prefix-enginecore-hip-oom")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "death_reported", 1)
    assert (got["fatal"]["family"], got["fatal"]["process"]) == ("torch_oom", "EngineCore pid=2651")
    assert got["counts"]["lines_by_format"] == {"event": 1, "unknown": 1, "vllm": 1}  # '...' is the thread's elision


def test_a_cloudwatch_csv_export_is_unquoted_and_its_octal_escapes_decoded():
    got = report("sagemaker-111-cloudwatch-csv-vllm-workerproc-failed-to-start")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("FATAL", "serving_process_died", 5)
    assert [(p["process"], p["role"]) for p in got["processes"]] == [("VllmWorker pid=96", "worker")]
    assert got["counts"]["lines_by_format"] == {"progress": 1, "vllm": 8}
    line = ('1756144011375,"#033[1;36m(VllmWorker pid=96)#033[0;0m ERROR 08-25 10:46:51 [multiproc_executor.py:559]   '
            'File ""/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py"", line 533, in '
            'worker_main#015"')
    assert formats.strip_terminal_escapes(line) == (
        '1756144011375,(VllmWorker pid=96) ERROR 08-25 10:46:51 [multiproc_executor.py:559]   File '
        '"/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 533, in worker_main')


def test_dynamos_tracing_lines_carry_sglangs_messages():
    got = report("dynamo-4855-sglang-decode-worker-tracing-lines-no-bootstrap")
    assert (got["verdict"], got["decided_by"]["rule"], got["phase"]) == ("NOT_READY", "still_starting", "loading_weights")
    assert got["counts"]["lines_by_format"] == {"rust_tracing": 4, "unknown": 2}  # NIXL's own two lines
    got = report("dynamo-6678-k9s-frontend-kv-router-selected-worker")  # the frontend alone: known lines, no server
    assert (got["verdict"], got["decided_by"]["rule"]) == ("INCONCLUSIVE", "no_server")
    events, stats = parse_lines(["2025-12-10T13:50:14.788089Z  INFO model_runner.load_model: Load weight end. "
                                 "type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=36.44 GB, mem usage=41.58 GB."])
    assert ([(e.kind, e.fmt, e.level) for e in events], stats.lines_by_format) == (
        [("load_weight_end", "rust_tracing", "INFO")], {"rust_tracing": 1})


def test_uvicorn_alone_is_a_web_app_not_a_serving_framework():
    """OPEA's micro-services start uvicorn apps: no readiness, no server (a false READY at the first count)."""
    got = report("opea-genaiexamples-706-compose-microservices-uvicorn-up")
    assert (got["verdict"], got["decided_by"]["rule"], got["readiness"], got["phase"]) == (
        "INCONCLUSIVE", "no_server", None, "http_server_up")
    got = report("vllm-15016-routes-startup-complete-request")  # under vLLM, uvicorn's startup is still its banner
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("READY", "ready_banner", 16)


def test_an_answer_other_than_2xx_or_503_shows_a_server_up(tmp_path):
    got = report("sglang-10001-pd-decode-mooncake-readbody-failed-then-500")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("READY", "ready_traffic", 2)
    for status, expected in (("500 Internal Server Error", "READY"), ("400 Bad Request", "READY"),
                            ("503 Service Unavailable", "NOT_READY")):
        path = tmp_path / f"{status[:3]}.log"
        path.write_text("[2025-09-04 07:15:20 TP0] Load weight end. type=LlamaForCausalLM, avail mem=30.0 GB\n"
                        f'[2025-09-04 07:15:26] INFO:     10.160.1.23:42180 - "POST /v1/completions HTTP/1.1" {status}\n')
        assert triage_files([path]).to_json()["verdict"] == expected, status


def test_tabs_are_spaces_to_the_line_model():
    """A route listing pasted through text recognition: the one line whose prefix survived (pid=443) is read."""
    got = report("vllm-ascend-11083-ocr-route-listing-with-tabs")
    assert (got["verdict"], got["decided_by"]["rule"], got["evidence"]["line"]) == ("READY", "ready_routes", 9)
    assert formats.strip_terminal_escapes("(APIServer\tpid=443)\tINFO 06-26 18:12:56\t[launcher.py:46]\tRoute: /v1/x") == (
        "(APIServer pid=443) INFO 06-26 18:12:56 [launcher.py:46] Route: /v1/x")
