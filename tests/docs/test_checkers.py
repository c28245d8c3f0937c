#!/usr/bin/env python3
"""test_checkers.py: the docs checkers' own checks fire (make docs-check runs it first).

check_docs.py and check_sim_example.py pass on clean docs whatever they check, so each check is
shown here to flag what it is for, on a line planted for it: a user doc's source file name or
partial path, project package and Java class (check_docs.source_refs), and the doc's expected
output lines with `...` (check_sim_example.missing_lines). Exit 0 when all hold (unittest's).
"""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import check_docs  # noqa: E402
import check_sim_example  # noqa: E402


class SourceRefs(unittest.TestCase):
    """A user doc's line that sends the reader into the source tree, which the tarball lacks."""

    @classmethod
    def setUpClass(cls):
        check_docs.REPO = REPO
        check_docs.SOURCES = None
        cls.dist = tempfile.mkdtemp(prefix="test-checkers-dist-")
        os.makedirs(os.path.join(cls.dist, "examples", "simcluster"))
        open(os.path.join(cls.dist, "examples", "simcluster", "simcluster.c"), "w").close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dist, ignore_errors=True)

    def refs(self, line):
        return check_docs.source_refs(self.dist, line)

    def test_a_source_file_name_and_a_partial_path_are_flagged(self):
        self.assertEqual(self.refs("the shim's exports.c says so"), ["exports.c"])
        self.assertEqual(self.refs("see src/exports.c"), ["src/exports.c"])

    def test_a_path_the_distribution_holds_is_not(self):
        self.assertEqual(self.refs("build examples/simcluster/simcluster.c with gcc"), [])
        self.assertEqual(self.refs("simcluster/simcluster.c is in examples/"), [])

    def test_a_project_package_is_flagged(self):
        self.assertEqual(self.refs("logged by io.nccltuner.engine at start"), ["io.nccltuner.engine"])

    def test_a_project_class_is_flagged_but_not_a_jvm_option(self):
        self.assertEqual(self.refs("CostModel.tighten prices them"), ["CostModel"])
        self.assertEqual(self.refs("as NcclTestsLog reads it"), ["NcclTestsLog"])
        self.assertEqual(self.refs("run with -XX:AOTCacheOutput=x.aot or -XX:+UseCompactObjectHeaders"), [])
        self.assertEqual(self.refs("an unknown CamelCase word like GigaBytes"), [])

    def test_a_class_member_in_a_code_span_is_flagged(self):
        self.assertEqual(self.refs("above 25% (`Compiler.MAX_POOLED_CV`) compile refuses"), ["Compiler"])
        self.assertEqual(self.refs("regret per range; `Compiler.Group.ranges()`)"), ["Compiler"])
        self.assertEqual(self.refs("written as `Foo.bar` in the example"), [])

    def test_the_shims_c_names_jextract_and_the_projects_tests_are_flagged(self):
        self.assertEqual(self.refs("its decision code (`NCCLTJ_DECISION_*`) on a queue"), ["NCCLTJ_DECISION_*"])
        self.assertEqual(self.refs("offsets from the jextract bindings"), ["jextract"])
        self.assertEqual(self.refs("The project's tests check this"), ["The project's tests"])
        self.assertEqual(self.refs("the bridge struct nccltj_bridge_t"), ["nccltj_bridge_t"])
        self.assertEqual(self.refs("see examples/simcluster/nccltj_bridge.h"), [])

    def test_check_user_docs_says_what_to_do(self):
        doc = os.path.join(self.dist, "guide.md")
        with open(doc, "w", encoding="utf-8") as f:
            f.write("# Guide\n\nCostModel prices the candidates.\n")
        check_docs.problems.clear()
        check_docs.check_user_docs(REPO, self.dist, ["guide.md"], [])
        self.assertEqual(check_docs.problems, [
            "dist:guide.md:3: developer reference CostModel: the distribution has no source tree (move it to docs/dev/)"])
        check_docs.problems.clear()


class MissingLines(unittest.TestCase):
    """The doc's ```text block after a command: its lines in order, `...` for any text or lines."""

    def test_every_line_in_order(self):
        self.assertEqual(check_sim_example.missing_lines(["a", "b"], "a\nx\nb\n"), [])
        self.assertEqual(check_sim_example.missing_lines(["b", "a"], "a\nb\n"), ["a"])
        self.assertEqual(check_sim_example.missing_lines(["a", "a"], "a\n"), ["a"], "one printed line per doc line")

    def test_a_line_matches_whole(self):
        self.assertEqual(check_sim_example.missing_lines(["sweep: 6 runs"], "sweep: 6 runs failed\n"), ["sweep: 6 runs"])

    def test_a_blank_line_of_the_doc_needs_none_printed(self):
        self.assertEqual(check_sim_example.missing_lines(["a", "", "b"], "a\nb"), [])

    def test_dots_stand_for_any_text_and_spaces_for_any_run_of_them(self):
        self.assertEqual(check_sim_example.missing_lines(["sweep: ... ok", "..."], "sweep: 1/6 run ok\n"), [])
        self.assertEqual(check_sim_example.missing_lines(["policy: x (2 rules)"], "policy:   x  (2 rules)\n"), [])
        self.assertEqual(check_sim_example.missing_lines(["policy: x (2 rules)"], "policy: x (3 rules)\n"),
                         ["policy: x (2 rules)"])

    def test_a_line_missing_is_said_with_those_after_it(self):
        self.assertEqual(check_sim_example.missing_lines(["a", "", "c", "d"], "a\nd\n"), ["c", "d"])


if __name__ == "__main__":
    unittest.main()
