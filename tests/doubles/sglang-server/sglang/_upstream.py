"""The double's argparse parsers, built from the real release's option table (baked into the image).

The table is read from the sglang wheel's own server_args.py / bench_serving.py by reprokit/upstream/args.py
when the test builds the image (options.json), so the double refuses, with argparse's own error and exit
code 2, every flag and choice that release would refuse.
"""

import argparse
import json
import sys

OPTIONS = "/usr/share/sglang-double/options.json"


def parser(table: str, prog: str) -> argparse.ArgumentParser:
    with open(OPTIONS) as fh:
        doc = json.load(fh)
    parser = argparse.ArgumentParser(prog=prog, add_help=False, conflict_handler="resolve")
    for option in doc[table]["options"]:
        keywords = {}
        if not option["takes_value"]:
            keywords["action"] = "store_true"
        else:
            if option["nargs"] is not None:
                keywords["nargs"] = option["nargs"]
            if option["choices"] is not None:
                keywords["choices"] = option["choices"]
        parser.add_argument(*option["strings"], **keywords)
    print(f"[double] flags checked against {doc[table]['origin']} (from {doc['wheel']})", file=sys.stderr, flush=True)
    return parser
