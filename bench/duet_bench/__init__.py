"""duet bench: the study's four experiments (launch, render, cpu, resize) on
duet's two stacks and their peers, with IPC counts and a report.

Python 3 standard library only. Entry points: `duet bench ...` (tools/duet
imports duet_bench.cli) and `python3 -m duet_bench ...` from bench/.
"""
