"""python3 -m duet_bench [bench] ARGS | python3 -m duet_bench report DIR...
| python3 -m duet_bench trace RESULTS_DIR [STACK...]"""
import sys

from duet_bench import cli, report_cmd, trace_cmd

argv = sys.argv[1:]
if argv[:1] == ["report"]:
    sys.exit(report_cmd.main(argv[1:]))
if argv[:1] == ["trace"]:
    sys.exit(trace_cmd.main(argv[1:]))
if argv[:1] == ["bench"]:
    argv = argv[1:]
sys.exit(cli.main(argv))
