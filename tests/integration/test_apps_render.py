#!/usr/bin/env python3
"""duet-render draws every scene unthrottled and reports frames > 0, fps and
flush time for each, on each stack and engine.

usage: test_apps_render.py STACK ENGINE
"""

import sys

import apps
import duet
from duet import check

SCENES = ["image_blend_smooth_scaled", "image_blend_nearest", "rect_blend", "many_small_images",
          "text_glyphs", "gradient", "scrolling"]


def test():
    stack, engine = sys.argv[1], sys.argv[2]
    exe = duet.program("DUET_RENDER")
    with apps.session(stack, "apps-render-%s-%s" % (stack, engine)) as s:
        r = s.run([exe, "--list"])
        check(r.stdout.split() == SCENES, "--list gives %r" % r.stdout.split())
        recs = apps.run_app(s, [exe, "--engine", engine, "--duration-ms", "250", "--size",
                                "640x480"], timeout=90)
        scenes = [r for r in recs if r["name"] == "scene"]
        check([r["scene"] for r in scenes] == SCENES, "scenes reported: %r"
              % [r["scene"] for r in scenes])
        for sc in scenes:
            apps.check_labels(sc, stack, engine)
            check(sc["frames"] > 0, "%s drew no frames: %r" % (sc["scene"], sc))
            check(sc["fps"] > 0 and sc["flush_mean_ns"] > 0, "%s: no fps or flush time: %r"
                  % (sc["scene"], sc))
            check(sc["duration_ns"] >= 250e6, "%s ran %d ns, asked 250 ms"
                  % (sc["scene"], sc["duration_ns"]))
            check(abs(sc["fps"] - sc["frames"] / (sc["duration_ns"] / 1e9)) < 0.01 * sc["fps"] + 0.01,
                  "%s: fps %.3f is not frames/duration" % (sc["scene"], sc["fps"]))
            check(sc["presented"] + sc["discarded"] <= sc["frames"] + 1,
                  "%s: more feedback than frames: %r" % (sc["scene"], sc))
            check((sc["width"], sc["height"]) == (640, 480), "%s drawn at %dx%d"
                  % (sc["scene"], sc["width"], sc["height"]))
            duet.log("%-26s %5d frames %8.1f fps flush %.3f ms presented %d"
                     % (sc["scene"], sc["frames"], sc["fps"], sc["flush_mean_ns"] / 1e6,
                        sc["presented"]))
        done = [r for r in recs if r["name"] == "render_done"]
        check(len(done) == 1 and done[0]["scenes"] == len(SCENES), "render_done: %r" % done)
        mean = sum(sc["fps"] for sc in scenes) / len(scenes)
        check(abs(done[0]["score_fps"] - mean) < 0.01, "score %.3f is not the mean fps %.3f"
              % (done[0]["score_fps"], mean))
        # A subset runs only what was asked.
        # --min-frames outlasts --duration-ms on a machine of any speed.
        recs = apps.run_app(s, [exe, "--engine", engine, "--duration-ms", "1", "--min-frames",
                                "12", "--scenes", "gradient,rect_blend"])
        got = [r for r in recs if r["name"] == "scene"]
        check([r["scene"] for r in got] == ["rect_blend", "gradient"],
              "--scenes gradient,rect_blend ran %r" % [r.get("scene") for r in recs])
        check(all(r["frames"] >= 12 for r in got), "--min-frames 12 drew %r"
              % [r["frames"] for r in got])


if __name__ == "__main__":
    duet.main(test)
