#!/usr/bin/python3
"""tools/bench/check_baseline.py on synthetic baseline and run files (standard library only).

    /usr/bin/python3 tests/tools/test_check_baseline.py
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tools", "bench"))
sys.dont_write_bytecode = True

import check_baseline  # noqa: E402


def baseline_row(model, batch, ratio, threads=2, zoo="zoo"):
    return {"zoo": zoo, "model": model, "batch": batch, "threads": threads, "ratio": ratio,
            "rounds": 3, "source": "seed"}


def run_record(model, batch, ratio, threads=2, zoo="zoo"):
    return {"zoo": zoo, "model": model, "batch": batch, "threads": threads, "rounds": 3,
            "ratio": ratio, "ratio_min": ratio * 0.98, "ratio_max": ratio * 1.02}


class CheckBaselineTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.baseline = self.write("baseline.json", {
            "format": check_baseline.BASELINE_FORMAT, "version": 1, "source": "synthetic",
            "sources": {"seed": "synthetic rows"},
            "rows": [baseline_row("resnet18", 1, 0.80), baseline_row("vit_b_16", 1, 0.90),
                     baseline_row("bert_decomposed", 8, 0.70)]})

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def run_file(self, name, records):
        return self.write(name, {"format": check_baseline.RUN_FORMAT, "version": 1,
                                 "date": "2026-12-01T00:00:00+00:00", "command": "compare_ort.py ...",
                                 "machine": {"cpu": "Test CPU", "cores": 2}, "records": records})

    def check(self, *args):
        """(exit status, stdout, stderr) of check_baseline.main."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = check_baseline.main(["--baseline", self.baseline, *args])
            except SystemExit as e:  # argparse's own usage errors
                rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def test_five_percent_worse_passes(self):
        run = self.run_file("run.json", [run_record("resnet18", 1, 0.84)])
        rc, out, _ = self.check(run)
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\| zoo/resnet18 b1 t2 \| 0.8 \| 0.84 \| \+5.0% \| ok \|")

    def test_fifteen_percent_worse_is_flagged(self):
        run = self.run_file("run.json", [run_record("resnet18", 1, 0.92), run_record("vit_b_16", 1, 0.90)])
        rc, out, _ = self.check(run)
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"zoo/resnet18 b1 t2 \| 0.8 \| 0.92 \| \+15.0% \| WORSE \|")
        self.assertRegex(out, r"zoo/vit_b_16 b1 t2 \| 0.9 \| 0.9 \| \+0.0% \| ok \|")
        self.assertIn("2 compared, 1 flagged", out)

    def test_exactly_the_tolerance_passes(self):
        run = self.run_file("run.json", [run_record("vit_b_16", 1, 0.99)])
        self.assertEqual(self.check(run)[0], 0)
        self.assertEqual(self.check("--tolerance", "0.05", run)[0], 1)

    def test_rows_on_one_side_are_listed(self):
        run = self.run_file("run.json", [run_record("resnet18", 1, 0.80), run_record("resnet50", 1, 0.9)])
        rc, out, _ = self.check(run)
        self.assertEqual(rc, 0, out)
        self.assertIn("| zoo/resnet50 b1 t2 | - | 0.9 | - | not compared: not in the baseline |", out)
        self.assertIn("| zoo/vit_b_16 b1 t2 | 0.9 | - | - | not compared: not in the runs |", out)
        self.assertIn("| zoo/bert_decomposed b8 t2 | 0.7 | - | - | not compared: not in the runs |", out)
        self.assertIn("3 not compared", out)

    def test_failed_model_is_flagged(self):
        run = self.run_file("run.json", [run_record("resnet18", 1, 0.80),
                                         {"zoo": "zoo", "model": "vit_b_16", "batch": 1, "threads": 2,
                                          "rounds": 3, "error": "switchyard run failed"}])
        rc, out, _ = self.check(run)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED: switchyard run failed", out)

    def test_several_runs_count_with_their_median(self):
        runs = [self.run_file(f"run{i}.json", [run_record("resnet18", 1, r)])
                for i, r in enumerate((0.95, 0.82, 0.84))]
        rc, out, _ = self.check(*runs)
        self.assertEqual(rc, 0, out)
        self.assertIn("| 0.8 | 0.84 | +5.0% | ok |", out)

    def test_usage_errors_exit_2_in_one_line(self):
        good = self.run_file("good.json", [run_record("resnet18", 1, 0.80)])
        cases = {
            "missing": [os.path.join(self.tmp.name, "absent.json")],
            "not JSON": [self.write("bad.json", "{not json")],
            "not a run": [self.write("other.json", {"format": "something else", "records": []})],
            "no ratio": [self.run_file("noratio.json", [{"zoo": "zoo", "model": "resnet18", "batch": 1,
                                                         "threads": 2}])],
            "bad batch": [self.run_file("badbatch.json", [{"zoo": "zoo", "model": "resnet18", "batch": "1",
                                                           "threads": 2, "ratio": 0.8}])],
            "no overlap": [self.run_file("other_models.json", [run_record("alexnet", 2, 1.0)])],
            "threads": [self.run_file("threads.json", [run_record("resnet18", 1, 0.80, threads=4)])],
            "no runs": [],
            "bad option": ["--no-such-option", good],
        }
        for what, args in cases.items():
            with self.subTest(what):
                rc, out, err = self.check(*args)
                self.assertEqual(rc, 2, f"{what}: {out}{err}")
                if what != "bad option":  # argparse prints its usage too
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("mismatched threads", self.check(*cases["threads"])[2])
        self.assertIn("no overlapping rows", self.check(*cases["no overlap"])[2])
        self.baseline = self.write("badbase.json", {"format": check_baseline.BASELINE_FORMAT})
        self.assertEqual(self.check(good)[0], 2)

    def test_update_replaces_measured_rows_and_keeps_the_rest(self):
        run = self.run_file("run.json", [run_record("resnet18", 1, 0.95), run_record("resnet50", 1, 0.9)])
        rc, out, _ = self.check("--update", run)
        self.assertEqual(rc, 0, out)
        with open(self.baseline) as f:
            doc = json.load(f)
        rows = {(r["model"], r["batch"]): r for r in doc["rows"]}
        self.assertEqual(rows[("resnet18", 1)]["ratio"], 0.95)
        self.assertEqual(rows[("resnet50", 1)]["ratio"], 0.9)
        self.assertEqual(rows[("vit_b_16", 1)]["ratio"], 0.90)
        self.assertEqual(rows[("vit_b_16", 1)]["source"], "seed")
        name = rows[("resnet18", 1)]["source"]
        self.assertIn("Test CPU", doc["sources"][name])
        self.assertEqual(self.check(run)[0], 0)  # the run now is the baseline

    def test_commands_cover_the_baseline(self):
        rc, out, _ = self.check("--commands")
        self.assertEqual(rc, 0)
        lines = out.strip().splitlines()
        self.assertEqual(len(lines), 2, out)  # batch 1 and batch 8 have different models
        self.assertIn("--models resnet18,vit_b_16 --batches 1 --threads 2", lines[0])
        self.assertIn("--models bert_decomposed --batches 8", lines[1])


if __name__ == "__main__":
    unittest.main()
