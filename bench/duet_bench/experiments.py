"""Every experiment of `duet bench`, in the order a stack runs them: the
registry cli.py runs and report.py shows. An experiment is one module
(its Experiment record, experiment.py) and its part of the report, paired
here: the report parts read the experiment modules, never the reverse."""
import dataclasses

from duet_bench import (concurrent, cpu, inputlat, launch, render, report_concurrent,
                        report_figures, report_input, report_painted, report_roundtrip,
                        report_sweep, report_thirdparty, report_vfb, resize, roundtrip, sweep,
                        thirdparty, vfb)

ALL = [dataclasses.replace(e, report=section) for e, section in (
    (launch.EXPERIMENT, report_figures.launch),
    (render.EXPERIMENT, report_painted.render),
    (cpu.EXPERIMENT, report_figures.cpu),
    (resize.EXPERIMENT, report_figures.resize),
    (thirdparty.EXPERIMENT, report_thirdparty.blocks),
    (roundtrip.EXPERIMENT, report_roundtrip.blocks),
    (concurrent.EXPERIMENT, report_concurrent.blocks),
    (inputlat.EXPERIMENT, report_input.blocks),
    (vfb.EXPERIMENT, report_vfb.blocks),
    (sweep.EXPERIMENT, report_sweep.blocks))]
BY_NAME = {e.name: e for e in ALL}
NAMES = [e.name for e in ALL]
DEFAULT = [e.name for e in ALL if e.default]
