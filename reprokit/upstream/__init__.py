"""What upstream releases and threads say, read from their own bytes: the options a sglang release and its
benchmark client accept (``args``), the options and environment a vLLM release accepts (``vllm_args``), and what a
saved upstream issue says a kit needs (``issue_reader``). Nothing is imported or installed from the wheels."""
