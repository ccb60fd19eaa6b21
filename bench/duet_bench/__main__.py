import sys

from duet_bench import cli

sys.exit(cli.main(sys.argv[1:]))
