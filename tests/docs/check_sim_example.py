#!/usr/bin/env python3
"""check_sim_example.py TARBALL: docs/measure.md's "Try the sweep without a GPU" works as written
from the unpacked distribution (issue 21: a newcomer with the tarball and no GPU).

Unpacks TARBALL (the built dist/nccl-tuner-java-<version>-linux-x86_64.tar.gz) into a temporary
folder and, from its top folder, runs the section's ```sh blocks in order, each as one /bin/sh
script with the NCCL_* variables of the caller's environment removed. Checked:

  - the section exists and its commands are, in order, the gcc build of
    examples/simcluster/simcluster.c, a `bin/nccl-tuner sweep`, a `bin/nccl-tuner compile`, a run
    of ./simcluster with the plugin and a `bin/nccl-tuner report`;
  - each block exits 0 (or N where its last line says `# exit N`);
  - each line of the ```text block right after a command block is printed by it (stdout and stderr
    together), in that order, other lines may come between; runs of blanks compare as one blank,
    `...` within a line stands for any text and a line that is only `...` for any lines;
  - the files the section says are written: the simcluster binary, my-sim-sweep/manifest.json and
    the six runs/*.txt outputs it names, my-sim-policy.yaml with 2 rules, my-sim-decisions.log.

Exit 0 when everything holds; 1 with one line per problem; 2 on a usage error.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

SECTION = "## Try the sweep without a GPU"
EXPECTED_COMMANDS = [r"^gcc .*examples/simcluster/simcluster\.c", r"^(\w+=\S+ )*bin/nccl-tuner sweep ",
                     r"^bin/nccl-tuner compile ", r"^(\w+=\S+ )*NCCL_TUNER_PLUGIN=.*\./simcluster ",
                     r"^bin/nccl-tuner report "]
RUNS = ["all_reduce_NCCL_r1.txt", "all_reduce_NCCL_r2.txt", "all_reduce_TREE-LL128_r1.txt",
        "all_reduce_TREE-LL128_r2.txt", "all_reduce_RING-SIMPLE-16_r1.txt", "all_reduce_RING-SIMPLE-16_r2.txt"]


def section_blocks(doc):
    """(info, lines) of each fenced block of the section, in order."""
    text = open(doc, encoding="utf-8").read()
    if SECTION not in text:
        return None
    body = text.split(SECTION, 1)[1]
    body = re.split(r"^## ", body, flags=re.M)[0]
    return [(m.group(1), m.group(2).split("\n")) for m in re.finditer(r"^```(\w*)\n(.*?)\n```", body, re.M | re.S)]


def line_pattern(line):
    parts = [re.escape(re.sub(r"\s+", " ", p)).replace(r"\ ", r"\s+") for p in line.strip().split("...")]
    return re.compile(r"^\s*" + ".*".join(parts) + r"\s*$")


def missing_lines(expected, output):
    """The expected lines (after the last one found) that the output lacks, in order."""
    out = output.split("\n")
    at = 0
    for k, line in enumerate(expected):
        if line.strip() in ("...", ""):
            continue
        pat = line_pattern(line)
        while at < len(out) and not pat.match(out[at]):
            at += 1
        if at == len(out):
            return expected[k:]
        at += 1
    return []


def main():
    if len(sys.argv) != 2 or not os.path.isfile(sys.argv[1]):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    problems = []
    work = tempfile.mkdtemp(prefix="check-sim-example-")
    try:
        with tarfile.open(sys.argv[1]) as t:
            t.extractall(work, filter="tar")
        tops = glob.glob(os.path.join(work, "*", "bin", "nccl-tuner"))
        if len(tops) != 1:
            print("check_sim_example: no single bin/nccl-tuner in %s" % sys.argv[1])
            return 1
        top = os.path.dirname(os.path.dirname(tops[0]))
        blocks = section_blocks(os.path.join(top, "docs", "measure.md"))
        if blocks is None:
            print("check_sim_example: docs/measure.md has no section \"%s\"" % SECTION[3:])
            return 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
        commands = []
        for n, (info, lines) in enumerate(blocks):
            if info != "sh":
                continue
            script = "\n".join(lines)
            joined = script.replace("\\\n", " ")
            commands.append(re.sub(r"\s+", " ", joined.strip()))
            m = re.search(r"#\s*exit (\d+)\s*$", joined.strip())
            want = int(m.group(1)) if m else 0
            r = subprocess.run(["/bin/sh", "-c", script], cwd=top, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=300)
            print("check_sim_example: ran %s: exit %d" % (commands[-1][:100], r.returncode))
            if r.returncode != want:
                problems.append("%s: exit %d, not %d: %s" % (commands[-1], r.returncode, want,
                                                             " | ".join(r.stdout.strip().split("\n")[-3:])))
            if n + 1 < len(blocks) and blocks[n + 1][0] == "text":
                lost = missing_lines(blocks[n + 1][1], r.stdout)
                if lost:
                    problems.append("%s: does not print the doc's line %r (nor those after it); it printed: %s"
                                    % (commands[-1], lost[0], " | ".join(r.stdout.strip().split("\n")[-6:])))
        if len(commands) != len(EXPECTED_COMMANDS) or not all(
                re.search(p, c) for p, c in zip(EXPECTED_COMMANDS, commands)):
            problems.append("the section's commands are not gcc, sweep, compile, a ./simcluster run with the "
                            "plugin, report: %s" % commands)
        written = ["simcluster", "my-sim-sweep/manifest.json", "my-sim-policy.yaml", "my-sim-decisions.log"] + \
                  ["my-sim-sweep/runs/" + f for f in RUNS]
        for f in written:
            if not os.path.isfile(os.path.join(top, f)) or os.path.getsize(os.path.join(top, f)) == 0:
                problems.append("%s: not written" % f)
        policy = os.path.join(top, "my-sim-policy.yaml")
        if os.path.isfile(policy):
            rules = len(re.findall(r"^\s*- collective: AllReduce$", open(policy).read(), re.M))
            if rules != 2:
                problems.append("my-sim-policy.yaml: %d rules, not the 2 the doc shows" % rules)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for p in problems:
        print("check_sim_example: " + p)
    print("check_sim_example: %d commands of docs/measure.md's \"%s\": %s"
          % (len(commands), SECTION[3:], "ok" if not problems else "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
