#!/usr/bin/env python3
"""check_docs.py REPO DIST_DIR [--run]: the README and docs work in the repository and in the
distribution (issue 21, the newcomer's path). `make docs-check` runs it on dist/'s unpacked tree.

Both layouts hold README.md, the user docs docs/*.md and the developer docs docs/dev/*.md (the
tarball ships them as they are in the repository; make/dist.mk). Checked:

  1. every relative Markdown link ([text](path#anchor)) of README.md and docs/**/*.md, and every
     mention of a `docs/...md` path, resolves in both layouts (the anchor to a heading of the
     target); a `docs/...md` mention in any other file of the repository resolves in it;
  2. the distribution's README.md and docs are the repository's, byte for byte, and each developer
     doc says that it describes the source tree;
  3. in the user docs (README.md, docs/*.md, examples/README.md, examples/*/README.md; and the
     comment lines of the shipped policies/*.yaml), everywhere (a tarball user
     cannot open the source tree, so no part of them may send the reader there; the developer
     detail is in docs/dev/):
       - no developer reference: a `make` command; a path into the repository's tests/,
         java-tools/, java-policy/, java-bench/, plugin-shim/, bench/, make/ or build/; a file name
         or partial path (`exports.c`, `src/plugin.c`) of a repository file under those folders that
         the distribution does not hold at that path; a Java package of the project (`io.nccltuner.`);
         the name of one of the project's Java classes, main, test or benchmark (a CamelCase word
         with two capitals, `CostModel.tighten`; not after `:`, `=` or `-`, as in a JVM option; or
         one capital in a code span, `Calibrator`);
       - a command line in a code block (or after a `$ ` prompt) is `bin/nccl-tuner ...`;
       - each path into the distribution (examples/, policies/, bin/, lib/, libexec/, docs/) exists
         in it;
       - no `-o`, `--html`, `--emit-policy` or `--keep-logs` of a `bin/nccl-tuner` example names a
         file the distribution ships (an example must not overwrite one);
  4. with --run, every such `bin/nccl-tuner` example (code blocks, `$ ` prompts, inline code) runs
     as written in a copy of DIST_DIR, from its top folder, in the docs' order, and exits 0, or N
     where its line says `# exit N` (an inline one: `exit N` in the text right after it). An example is not run when it names an input that is the
     reader's own: a bare file name (no folder) that does not exist at that point, or one under
     /shared/, /tmp/ or ~, or `...`; a `sweep` (it needs nccl-tests and a cluster) neither (docs/measure.md's
     sweep of the simulated cluster is run by check_sim_example.py, from the tarball). An input
     with a folder that does not exist fails the check.

Exit 0 when everything holds; 1 with one line per problem.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

DEV_TOPS = ("tests", "java-tools", "java-policy", "java-bench", "plugin-shim", "bench", "make", "build")
DEV_PATH = re.compile(r"(?<![\w/.$~-])(" + "|".join(DEV_TOPS) + r")/([\w.*-]*)")
MAKE_CMD = re.compile(r"`make(?: [^`]*)?`")
DIST_PATH = re.compile(r"(?<![\w/.$~%-])((?:examples|policies|bin|lib|libexec|docs)/[\w.*%/-]*)")
DOC_MENTION = re.compile(r"(?<![\w/.-])(docs/(?:[\w-]+/)*[\w-]+\.md)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
OUT_OPT = re.compile(r"(?:^|\s)(?:-o|--html|--emit-policy|--keep-logs)[ =](\S+)")
INLINE_CMD = re.compile(r"`(bin/nccl-tuner [^`]+)`")
problems = []
REPO = None


def problem(where, what):
    problems.append(f"{where}: {what}")


def slug(heading):
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return h.replace(" ", "-")


def blocks(path):
    """(kind, first line number, lines) per heading, paragraph/list item/table, fenced code block
    ("code") or indented one ("indented": also synopses, whose `nccl-tuner` is not flagged)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            body = lines[i + 1 : j]
            out.append(("code", i + 2, body))
            i = j + 1
            continue
        if re.match(r"#+ ", line):
            out.append(("heading", i + 1, [line]))
            i += 1
            continue
        if not s:
            i += 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            out.append(("indented", i + 1, lines[i:j]))
            i = j
            continue
        # a paragraph, list item or table: up to a blank line, a heading, a fence or a new list item
        j = i + 1
        while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith("```") \
                and not re.match(r"#+ ", lines[j]) and not re.match(r"\s*(- |\d+\. )", lines[j]):
            j += 1
        out.append(("para", i + 1, lines[i:j]))
        i = j
    return out


def doc_files(root):
    files = ["README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [f for f in files if os.path.isfile(os.path.join(root, f))]


def headings_of(path):
    return {slug(m.group(2)) for m in re.finditer(r"^(#+) (.*)$", open(path, encoding="utf-8").read(), re.M)}


def check_links(root, name, files):
    for rel in files:
        path = os.path.join(root, rel)
        text = open(path, encoding="utf-8").read()
        for n, line in enumerate(text.split("\n"), 1):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    problem(f"{name}:{rel}:{n}", f"link {target}: no {os.path.relpath(dest, root)}")
                elif anchor and dest.endswith(".md") and anchor not in headings_of(dest):
                    problem(f"{name}:{rel}:{n}", f"link {target}: no heading #{anchor} there")
            for m in DOC_MENTION.finditer(line):
                if not os.path.isfile(os.path.join(root, m.group(1))):
                    problem(f"{name}:{rel}:{n}", f"{m.group(1)}: no such file")


def check_repo_mentions(repo):
    try:
        listed = subprocess.run(["git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard"],
                                capture_output=True, text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return
    for rel in listed:
        path = os.path.join(repo, rel)
        if not rel or rel.endswith(".md") and (rel == "README.md" or rel.startswith("docs/")) \
                or not os.path.isfile(path):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for m in DOC_MENTION.finditer(line):
                if not os.path.isfile(os.path.join(repo, m.group(1))):
                    problem(f"repo:{rel}:{n}", f"{m.group(1)}: no such file")


def dev_refs(repo, line):
    refs = []
    for m in DEV_PATH.finditer(line):
        top, second = m.group(1), m.group(2)
        if top == "build" or os.path.exists(os.path.join(repo, top, second.split("*")[0]) if second else
                                            os.path.join(repo, top)):
            refs.append(m.group(0))
    refs += MAKE_CMD.findall(line)
    return refs


def repo_sources(repo):
    """What names the source tree to a reader: the paths of the repository's files under DEV_TOPS
    (git ls-files) and the simple names of the project's Java classes."""
    try:
        listed = subprocess.run(["git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard"],
                                capture_output=True, text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        listed = []
    paths = [p for p in listed if p.split("/")[0] in DEV_TOPS]
    classes = {os.path.basename(p)[:-5] for p in paths if p.endswith(".java")}
    return paths, classes


SOURCES = None
PATH_TOKEN = re.compile(r"(?<![\w/.$~-])[\w.-]+(?:/[\w.-]+)*\.(?:c|h|py|sh|java|mk)\b")
JAVA_PKG = re.compile(r"\bio\.nccltuner(?:\.\w+)*")
CLASS_WORD = re.compile(r"(?<![\w:=-])[A-Z][a-z]\w*[A-Z]\w*")
# a one-capital class name (`Calibrator`) in a code span: CLASS_WORD's two capitals miss it, and in
# prose such a word is mostly English (Policy, Replay)
CODE_CLASS = re.compile(r"`([A-Z][a-z]\w*)`")
NCCL_WORDS = {"Algorithm", "Protocol"}  # the row names of NCCL's TUNING table, also class names here
# a member of a class in a code span (`Compiler.MAX_POOLED_CV`, `Compiler.Group.ranges()`): the class
# is one-capital, so CLASS_WORD misses it, and the span is not the bare name CODE_CLASS matches
CODE_MEMBER = re.compile(r"`([A-Z][a-z]\w*)(?:\.\w+)+(?:\(\))?`")
# the shim's C names (`NCCLTJ_DECISION_*`, nccltj_bridge_t) and the bindings' generator: source-tree words
SHIM_NAME = re.compile(r"\b(?:NCCLTJ_\w*\*?|nccltj_\w+\b(?!\.h)|jextract\b)")
# a check the reader cannot run: the project's test suite is not in the tarball
TESTS_WORDS = re.compile(r"\b[Tt]he project's tests\b")


def source_refs(dist, line):
    """The repository file names and partial paths (`exports.c`, `src/plugin.c`), project packages,
    Java class names (alone or with a member, `Compiler.MAX_POOLED_CV`), the shim's C names
    (`NCCLTJ_HIST_*`), "jextract" and "the project's tests" in a line of a user doc, other than a path the distribution
    holds (from its top folder or examples/, say `examples/simcluster/simcluster.c`)."""
    global SOURCES
    if SOURCES is None:
        SOURCES = repo_sources(REPO)
    paths, classes = SOURCES
    refs = []
    for m in PATH_TOKEN.finditer(line):
        tok = m.group(0).rstrip(".")
        if exists_in(dist, tok) or exists_in(os.path.join(dist, "examples"), tok):
            continue
        if any(p == tok or p.endswith("/" + tok) for p in paths):
            refs.append(tok)
    refs += JAVA_PKG.findall(line)
    refs += [w for w in CLASS_WORD.findall(line) + [c for c in CODE_CLASS.findall(line) if c not in NCCL_WORDS]
             + CODE_MEMBER.findall(line)
             if w in classes]
    refs += SHIM_NAME.findall(line) + TESTS_WORDS.findall(line)
    return refs


# made in the unpacked tree after installing, not shipped
GENERATED = {"lib/nccl-tuner-java.aot": "bin/nccl-tuner-aot"}


def exists_in(root, p):
    p = p.rstrip(".,:;)")
    if p in GENERATED:
        p = GENERATED[p]
    if "*" in p or "%" in p:
        return bool(glob.glob(os.path.join(root, p.replace("%h", "*").replace("%p", "*"))))
    return os.path.exists(os.path.join(root, p))


def commands_of(kind, body):
    """The (bin/)nccl-tuner command lines of a code block (continuations joined), or the inline
    bin/nccl-tuner ones of a paragraph."""
    cmds = []
    if kind in ("code", "indented"):
        joined, cur = [], ""
        for line in body:
            cur += line.rstrip()
            if cur.endswith("\\"):
                cur = cur[:-1] + " "
                continue
            joined.append(cur)
            cur = ""
        for line in joined:
            s = line.strip()
            s = s[2:] if s.startswith("$ ") else s
            if s.startswith("bin/nccl-tuner ") or s.startswith("nccl-tuner "):
                cmds.append(s)
    else:
        text = " ".join(x.strip() for x in body)
        for m in INLINE_CMD.finditer(text):
            # an exit status other than 0 is said right after the command: `bin/nccl-tuner ...` ... exit 1
            after = re.match(r"[^`]{0,80}?\bexit (\d+)", text[m.end():])
            cmds.append(m.group(1) + (f" # exit {after.group(1)}" if after else ""))
    return cmds


def check_user_docs(repo, dist, files, runs):
    for rel in files:
        for kind, start, body in blocks(os.path.join(dist, rel)):
            for k, line in enumerate(body):
                where = f"dist:{rel}:{start + k}"
                for ref in dev_refs(repo, line) + source_refs(dist, line):
                    problem(where, f"developer reference {ref}: the distribution has no source tree (move it to docs/dev/)")
                s = line.strip()
                if kind == "code" and s.startswith("nccl-tuner ") or s.startswith("$ nccl-tuner "):
                    problem(where, "a command example names nccl-tuner, not bin/nccl-tuner")
                for m in DIST_PATH.finditer(line):
                    if not exists_in(dist, m.group(1)):
                        problem(where, f"{m.group(1).rstrip('.,:;)')}: not in the distribution")
            for cmd in commands_of(kind, body):
                for m in OUT_OPT.finditer(cmd.split(" #")[0]):
                    if os.path.exists(os.path.join(dist, m.group(1))):
                        problem(f"dist:{rel}:{start}", f"{cmd}: writes over the shipped {m.group(1)}")
                if cmd.startswith("bin/"):
                    runs.append((f"{rel}:{start}", cmd))


def check_policy_comments(repo, dist):
    """The comment lines of the shipped policies/*.yaml name no source path or class: a tarball
    user reads them (and compiles the shipped inputs into the same file)."""
    for path in sorted(glob.glob(os.path.join(dist, "policies", "*.yaml"))):
        rel = os.path.relpath(path, dist)
        for k, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.lstrip().startswith("#"):
                for ref in dev_refs(repo, line) + source_refs(dist, line):
                    problem(f"dist:{rel}:{k}", f"developer reference {ref}: the distribution has no source tree")


def run_examples(dist, runs):
    work = tempfile.mkdtemp(prefix="check-docs-")
    top = os.path.join(work, "dist")
    shutil.copytree(dist, top, symlinks=True)
    ran = skipped = 0
    try:
        for where, cmd in runs:
            line, _, comment = cmd.partition(" #")
            want = 0
            m = re.search(r"\bexit (\d+)", comment)
            if m:
                want = int(m.group(1))
            words = shlex.split(line)
            outputs = {words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--html", "--emit-policy",
                                                                               "--keep-logs")}
            own = None
            if words[1] == "sweep" or "..." in line:
                own = "a sweep or an elided command"
            for prev, w in zip(words[1:], words[2:]):
                # an input: a word with a folder or an extension, or a positional argument
                if w.startswith("-") or w in outputs or not (re.search(r"/|\.\w+$", w) or not prev.startswith("-")):
                    continue
                if re.match(r"(/shared/|/tmp/|~)", w):
                    own = w
                elif "/" not in w and not glob.glob(os.path.join(top, w)):
                    own = w
            if own:
                print(f"check_docs: not run ({own} is the reader's own): {where}: {line}")
                skipped += 1
                continue
            r = subprocess.run(["/bin/sh", "-c", line], cwd=top, capture_output=True, text=True, timeout=300)
            ran += 1
            if r.returncode != want:
                tail = (r.stdout + r.stderr).strip().split("\n")[-3:]
                problem(where, f"{line}: exit {r.returncode}, not {want}: " + " | ".join(tail))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ran, skipped


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    global REPO
    repo, dist = (os.path.abspath(a) for a in args)
    REPO = repo
    repo_files = doc_files(repo)
    dist_files = doc_files(dist)
    if repo_files != dist_files:
        problem("dist", f"docs differ from the repository's: {sorted(set(repo_files) ^ set(dist_files))}")
    for rel in set(repo_files) & set(dist_files):
        if open(os.path.join(repo, rel), "rb").read() != open(os.path.join(dist, rel), "rb").read():
            problem(f"dist:{rel}", "not the repository's (make dist again)")
        if rel.startswith("docs/dev/") and "describes the source tree" not in open(os.path.join(repo, rel)).read():
            problem(f"repo:{rel}", "a developer doc that does not say it describes the source tree")
    check_links(repo, "repo", repo_files)
    if not os.path.isfile(os.path.join(dist, "examples", "README.md")):
        problem("dist", "no examples/README.md (make/examples-README.md)")
    examples = sorted(os.path.relpath(p, dist) for p in glob.glob(os.path.join(dist, "examples", "README.md"))
                      + glob.glob(os.path.join(dist, "examples", "*", "README.md")))
    check_links(dist, "dist", dist_files + examples)
    check_repo_mentions(repo)
    user = [f for f in dist_files if not f.startswith("docs/dev/")] + examples
    runs = []
    check_user_docs(repo, dist, user, runs)
    check_policy_comments(repo, dist)
    summary = f"{len(repo_files)} docs in each layout, {len(runs)} bin/nccl-tuner examples"
    if "--run" in sys.argv:
        ran, skipped = run_examples(dist, runs)
        summary += f", {ran} run, {skipped} not run (the reader's own inputs)"
    for p in problems:
        print(p)
    print(f"check_docs: {summary}: {'ok' if not problems else str(len(problems)) + ' problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
