#!/usr/bin/env python3
"""Checks that Kiln's folders depend on each other in the directions the design allows.

Reads the `#include` lines of every source file under the layered top-level folders and fails
(exit 1, each offending include as file:line) on:
  - a cycle between folders (a folder is the directory holding a file, e.g. compiler/codegen),
    outside tests/ (a test folder's helpers are no layer);
  - a cycle between individual header files (a header that includes itself through others);
  - compiler/, dialects/, frontends/ or tools/kiln-opt including a private runtime header
    (runtime/src/...); the public headers under runtime/include (`kiln/*.h`) are fine;
  - runtime/ including compiler/, dialects/, frontends/, tools/, tests/ or an MLIR, LLVM,
    ONNX or protobuf header;
  - contract/ (the layer under both compiler and runtime) including any of compiler/, dialects/,
    frontends/, runtime/, tools/ or tests/;
  - the runtime's artifact reader (runtime/src/artifact/) including a device (runtime/src/cpu/,
    runtime/src/cuda/): an artifact is read the same whatever device will run it;
  - anything outside tests/ including tests/;
  - the Python package's native module (python/, a front end of the runtime like the CLI and the
    server) including a private runtime header other than the simulator's registration entry:
    it calls the C API and its C++ wrapper (runtime/include/kiln), never the runtime's internals;
  - an entry of ALLOWED_RUNTIME_PRIVATE_INCLUDES that nothing includes any more.
tools/ (other than tools/kiln-opt) and tests/ may use the runtime's internal C++ API.

  scripts/check-layers.py              check the tree this script lives in
  scripts/check-layers.py --self-test  show that the check catches planted cycles and includes
"""

import argparse
import os
import re
import sys
from collections import defaultdict, deque

# ALLOWLIST: private runtime headers the compiler may still include. Empty: what the compiler and
# the runtime share lives in contract/ (the layer under both). The check reports an entry that
# nothing includes any more, so that the list only shrinks.
ALLOWED_RUNTIME_PRIVATE_INCLUDES = set()

# Top-level folders whose sources are read.
SCANNED_ROOTS = ("compiler", "dialects", "frontends", "runtime", "tools", "contract", "tests",
                 "python")
SOURCE_SUFFIXES = (".h", ".hpp", ".inc", ".c", ".cc", ".cpp")
# Where a `#include "kiln/..."` resolves: the runtime's public headers.
PUBLIC_RUNTIME_INCLUDE_DIR = "runtime/include"

# Top-level folders a private runtime header (runtime/src/...) may not be included from.
NO_RUNTIME_PRIVATE = ("compiler/", "dialects/", "frontends/", "tools/kiln-opt/")
# Front ends of the runtime held to its public API, and the one private header they may include:
# the entry that installs the simulated CUDA device, a library of its own they link.
FRONT_END_ROOTS = ("python/",)
FRONT_END_RUNTIME_ENTRIES = {"runtime/src/cuda/sim/register_simulated_cuda.h"}
# What runtime/ may not include: compiler-side folders and the compiler's third-party headers.
RUNTIME_FORBIDDEN_FOLDERS = ("compiler/", "dialects/", "frontends/", "tools/", "tests/")
RUNTIME_FORBIDDEN_EXTERNAL = ("mlir/", "llvm/", "llvm-c/", "onnx/", "google/protobuf/")
# What the artifact reader may not include: the devices.
ARTIFACT_DIR = "runtime/src/artifact/"
ARTIFACT_FORBIDDEN_FOLDERS = ("runtime/src/cpu/", "runtime/src/cuda/")
# What contract/ may not include.
CONTRACT_FORBIDDEN_FOLDERS = ("compiler/", "dialects/", "frontends/", "runtime/", "tools/",
                              "tests/")

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Include:
    """One `#include` line: where it is, what it names, and the repository file it resolves to."""

    def __init__(self, file, line, spelled, target, external):
        self.file = file  # repository-relative path of the including file
        self.line = line  # 1-based
        self.spelled = spelled  # the path as written between the quotes or brackets
        self.target = target  # repository-relative path it resolves to, or None
        self.external = external  # True when it names a header outside the repository

    def where(self):
        return f'{self.file}:{self.line}: #include "{self.spelled}"'


def folder_of(path):
    return os.path.dirname(path)


def under(path, prefixes):
    return any(path.startswith(p) for p in prefixes)


def parse_includes(files, generated_ok=True):
    """Returns the Include records of `files` ({repository path: text}).

    A quoted include resolves, in order, to a repository path spelled from the root (existing, or
    a generated file such as `compiler/codegen/Passes.h.inc` placed in the folder it names), to
    `runtime/include/<path>`, or to a path relative to the including file; anything else is an
    external header.
    """
    includes = []
    for path in sorted(files):
        in_block_comment = False
        for number, text in enumerate(files[path].splitlines(), start=1):
            stripped = text.strip()
            if in_block_comment:
                if "*/" in stripped:
                    in_block_comment = False
                continue
            if stripped.startswith("/*") and "*/" not in stripped:
                in_block_comment = True
                continue
            match = INCLUDE_RE.match(text)
            if not match:
                continue
            bracket, spelled = match.groups()
            target = None
            relative = os.path.normpath(os.path.join(folder_of(path), spelled))
            if bracket == '"':
                if spelled in files or (generated_ok and spelled.split("/")[0] in SCANNED_ROOTS):
                    target = spelled
                elif f"{PUBLIC_RUNTIME_INCLUDE_DIR}/{spelled}" in files:
                    target = f"{PUBLIC_RUNTIME_INCLUDE_DIR}/{spelled}"
                elif relative in files:
                    target = relative
            includes.append(Include(path, number, spelled, target, target is None))
    return includes


def find_cycles(edges):
    """Returns the strongly connected components with more than one node of the graph `edges`
    ({node: set of successors}), each as a sorted list, in a stable order (Tarjan's algorithm)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]
    nodes = sorted(set(edges) | {t for ts in edges.values() for t in ts})

    def visit(root):
        # Iterative, so deep include chains do not hit Python's recursion limit.
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter[0]
                    counter[0] += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(components)


def shortest_cycle(edges, component):
    """Returns one shortest cycle through the first node of `component`, as a node list whose
    last element repeats the first."""
    start = component[0]
    members = set(component)
    previous = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for succ in sorted(edges.get(node, ())):
            if succ not in members:
                continue
            if succ == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if succ not in previous:
                previous[succ] = node
                queue.append(succ)
    raise AssertionError(f"no cycle through {start}")


def cycle_problems(kind, includes, node_of):
    """Reports each cycle of the graph whose nodes are `node_of(path)` and whose edges are the
    includes between different nodes."""
    edges = defaultdict(set)
    witnesses = defaultdict(list)
    for inc in includes:
        if inc.target is None:
            continue
        source, target = node_of(inc.file), node_of(inc.target)
        if source is None or target is None or source == target:
            continue
        edges[source].add(target)
        witnesses[(source, target)].append(inc)
    problems = []
    for component in find_cycles(edges):
        cycle = shortest_cycle(edges, component)
        lines = [f"{kind} cycle: " + " -> ".join(cycle)]
        for source, target in zip(cycle, cycle[1:]):
            lines.append(f"  {source} -> {target}: {witnesses[(source, target)][0].where()}")
        if len(component) > len(cycle) - 1:
            lines.append(f"  (the cycle is part of a knot of {len(component)}: "
                         + ", ".join(component) + ")")
        inner = sorted((s, t) for s in component for t in edges[s] if t in component)
        lines.append("  every include inside the knot:")
        for source, target in inner:
            for inc in witnesses[(source, target)]:
                lines.append(f"    {inc.where()}")
        problems.append("\n".join(lines))
    return problems


def rule_problems(includes, allowed_runtime_private=ALLOWED_RUNTIME_PRIVATE_INCLUDES):
    """Reports the includes that cross a layer boundary the wrong way, and each allowed
    exception that nothing uses any more."""
    problems = []
    used_exceptions = set()
    for inc in includes:
        f, spelled, target = inc.file, inc.spelled, inc.target
        if target is not None and target.startswith("tests/") and not f.startswith("tests/"):
            problems.append(f"{inc.where()}: only tests include tests/")
        if under(f, NO_RUNTIME_PRIVATE) and target is not None and target.startswith(
                "runtime/src/"):
            if target in allowed_runtime_private:
                used_exceptions.add(target)
            else:
                problems.append(f"{inc.where()}: {f.split('/')[0]}/ includes a private runtime "
                                "header (runtime/src/); use contract/ or runtime/include/kiln")
        if (under(f, FRONT_END_ROOTS) and target is not None and target.startswith("runtime/src/")
                and target not in FRONT_END_RUNTIME_ENTRIES):
            problems.append(f"{inc.where()}: {f.split('/')[0]}/ is a front end of the runtime and "
                            "includes its internals; call the C API or kiln/runtime.hpp")
        if f.startswith("runtime/"):
            if target is not None and under(target, RUNTIME_FORBIDDEN_FOLDERS):
                problems.append(f"{inc.where()}: runtime/ includes {target.split('/')[0]}/")
            elif inc.external and under(spelled, RUNTIME_FORBIDDEN_EXTERNAL):
                problems.append(f"{inc.where()}: runtime/ includes an MLIR/LLVM/ONNX/protobuf "
                                "header")
        if f.startswith(ARTIFACT_DIR) and target is not None and under(
                target, ARTIFACT_FORBIDDEN_FOLDERS):
            problems.append(f"{inc.where()}: the artifact reader includes a device "
                            f"({folder_of(target)}/)")
        if f.startswith("contract/") and target is not None and under(
                target, CONTRACT_FORBIDDEN_FOLDERS):
            problems.append(f"{inc.where()}: contract/ includes {target.split('/')[0]}/")
    for stale in sorted(set(allowed_runtime_private) - used_exceptions):
        problems.append(f"ALLOWED_RUNTIME_PRIVATE_INCLUDES lists {stale}, which no compiler-side "
                        "file includes any more: delete the entry")
    return problems


def is_header(path):
    return path.endswith((".h", ".hpp", ".inc"))


def check(files, allowed_runtime_private=ALLOWED_RUNTIME_PRIVATE_INCLUDES):
    """Returns every problem found in `files` ({repository path: text})."""
    includes = parse_includes(files)
    problems = rule_problems(includes, allowed_runtime_private)
    problems += cycle_problems(
        "folder", includes, lambda p: None if p.startswith("tests/") else folder_of(p))
    problems += cycle_problems("header", includes, lambda p: p if is_header(p) else None)
    return problems


def read_tree(root):
    files = {}
    for top in SCANNED_ROOTS:
        for directory, subdirs, names in os.walk(os.path.join(root, top)):
            subdirs.sort()
            for name in names:
                if name.endswith(SOURCE_SUFFIXES):
                    full = os.path.join(directory, name)
                    with open(full, encoding="utf-8", errors="replace") as handle:
                        files[os.path.relpath(full, root)] = handle.read()
    return files


# --- Self-test -----------------------------------------------------------------------------------

# A small tree laid out like Kiln's, which the check must pass.
CLEAN_TREE = {
    "contract/memory_plan.h": '#include <vector>\n',
    "runtime/include/kiln/runtime.h": '#include <stddef.h>\n',
    "runtime/src/status.h": '#include "kiln/runtime.h"\n',
    "runtime/src/trace.h": '#include "runtime/src/status.h"\n',
    "runtime/src/session.cpp": '#include "runtime/src/trace.h"\n#include "contract/memory_plan.h"\n',
    "runtime/src/cuda/cuda_device.h": '#include "runtime/src/trace.h"\n',
    "dialects/program/ProgramOps.h": '#include "mlir/IR/Dialect.h"\n'
                                     '#include "dialects/program/ProgramOps.h.inc"\n',
    "compiler/program/Liveness.h": '#include "dialects/program/ProgramOps.h"\n'
                                   '#include "contract/memory_plan.h"\n'
                                   '#include "runtime/src/memory_planner.h"\n',
    "compiler/codegen/Passes.h": '#include "compiler/program/Liveness.h"\n'
                                 '#include "kiln/runtime.h"\n',
    "compiler/codegen/cuda/Emit.cpp": '#include "compiler/codegen/Passes.h"\n',
    "tools/kiln/Program.h": '#include "runtime/src/session.h"\n',
    "tools/kiln/Commands.cpp": '#include "Program.h"\n',
    "tests/runtime/test_util.h": '#include "runtime/src/status.h"\n',
    "tests/runtime/trace_test.cpp": '#include "tests/runtime/test_util.h"\n',
    "python/src/module.cpp": '#include "kiln/runtime.h"\n'
                             '#include "runtime/src/cuda/sim/register_simulated_cuda.h"\n',
}

# Each case: (what is planted, {path: text appended to the clean tree}, text the report must hold).
PLANTED = [
    ("a cycle between two compiler folders",
     {"compiler/program/Liveness.h": '#include "compiler/codegen/Passes.h"\n'},
     "folder cycle: compiler/codegen -> compiler/program -> compiler/codegen"),
    ("a cycle between a folder and its subfolder",
     {"runtime/src/status.h": '#include "runtime/src/cuda/cuda_device.h"\n'},
     "folder cycle: runtime/src -> runtime/src/cuda -> runtime/src"),
    ("a header cycle inside one folder",
     {"runtime/src/status.h": '#include "runtime/src/trace.h"\n'},
     "header cycle: runtime/src/status.h -> runtime/src/trace.h -> runtime/src/status.h"),
    ("the compiler including a private runtime header",
     {"compiler/codegen/cuda/Emit.cpp": '#include "runtime/src/cuda/cuda_device.h"\n'},
     'compiler/codegen/cuda/Emit.cpp:2: #include "runtime/src/cuda/cuda_device.h": compiler/ '
     'includes a private runtime header'),
    ("kiln-opt including a private runtime header",
     {"tools/kiln-opt/kiln-opt.cpp": '#include "runtime/src/trace.h"\n'},
     "tools/kiln-opt/kiln-opt.cpp:1"),
    ("a dialect including a private runtime header",
     {"dialects/program/ProgramOps.h": '#include "runtime/src/status.h"\n'},
     "dialects/program/ProgramOps.h:3"),
    ("the runtime including the compiler",
     {"runtime/src/session.cpp": '#include "compiler/codegen/Passes.h"\n'},
     "runtime/src/session.cpp:3: #include \"compiler/codegen/Passes.h\": runtime/ includes "
     "compiler/"),
    ("the runtime including an MLIR header",
     {"runtime/src/trace.h": '#include "mlir/IR/Builders.h"\n'},
     'runtime/src/trace.h:2: #include "mlir/IR/Builders.h": runtime/ includes an MLIR'),
    ("the runtime including an LLVM header in brackets",
     {"runtime/src/status.h": '#include <llvm/ADT/StringRef.h>\n'},
     "runtime/src/status.h:2"),
    ("the contract including the runtime",
     {"contract/memory_plan.h": '#include "runtime/src/status.h"\n'},
     'contract/memory_plan.h:2: #include "runtime/src/status.h": contract/ includes runtime/'),
    ("the contract including the compiler",
     {"contract/memory_plan.h": '#include "compiler/program/Liveness.h"\n'},
     "contract/ includes compiler/"),
    ("the artifact reader including the CUDA device",
     {"runtime/src/artifact/artifact.cpp": '#include "runtime/src/cuda/cuda_device.h"\n'},
     'runtime/src/artifact/artifact.cpp:1: #include "runtime/src/cuda/cuda_device.h": the '
     'artifact reader includes a device (runtime/src/cuda/)'),
    ("the Python module including the runtime's internals",
     {"python/src/module.cpp": '#include "runtime/src/trace.h"\n'},
     'python/src/module.cpp:3: #include "runtime/src/trace.h": python/ is a front end of the '
     'runtime'),
    ("the compiler including a test helper",
     {"compiler/program/Liveness.h": '#include "tests/runtime/test_util.h"\n'},
     "only tests include tests/"),
]


# The exceptions the synthetic tree uses.
SELF_TEST_ALLOWED = {"runtime/src/memory_planner.h"}


def self_test():
    failures = []
    clean = check(CLEAN_TREE, SELF_TEST_ALLOWED)
    if clean:
        failures.append("the clean tree fails:\n" + "\n".join(clean))
    for what, planted, expected in PLANTED:
        files = dict(CLEAN_TREE)
        for path, text in planted.items():
            files[path] = files.get(path, "") + text
        report = "\n".join(check(files, SELF_TEST_ALLOWED))
        if expected not in report:
            failures.append(f"planting {what} is not reported as {expected!r}; "
                            f"the report:\n{report or '(nothing)'}")
    # A comment that spells an include is not an include.
    files = dict(CLEAN_TREE)
    files["runtime/src/trace.h"] += '/*\n#include "mlir/IR/Builders.h"\n*/\n'
    if check(files, SELF_TEST_ALLOWED):
        failures.append("an include inside a block comment is reported")
    # An exception nothing uses any more is reported, so that the list only shrinks.
    stale = "\n".join(check(CLEAN_TREE, SELF_TEST_ALLOWED | {"runtime/src/matrix_layout.h"}))
    if "lists runtime/src/matrix_layout.h, which no compiler-side file includes" not in stale:
        failures.append("an unused exception is not reported")

    # The same plants in this repository's own tree: the check must catch them there too.
    tree = read_tree(REPO_ROOT)
    baseline = set(check(tree))
    real_plants = [
        ("runtime/src/status.h", '#include "compiler/codegen/Passes.h"\n',
         "runtime/ includes compiler/"),
        ("runtime/src/status.h", '#include "mlir/IR/Value.h"\n', "runtime/ includes an MLIR"),
        ("compiler/codegen/Passes.h", '#include "runtime/src/status.h"\n',
         "includes a private runtime header"),
        ("runtime/src/artifact/artifact_verifier.cpp",
         '#include "runtime/src/cuda/cuda_library_call.h"\n', "the artifact reader includes a device"),
        ("dialects/graph/GraphOps.h", '#include "compiler/codegen/Passes.h"\n', "folder cycle"),
    ]
    for path, text, expected in real_plants:
        if path not in tree:
            failures.append(f"{path} is gone: update the self-test's plants in the real tree")
            continue
        files = dict(tree)
        files[path] = files[path] + text
        new = [p for p in check(files) if p not in baseline]
        if not any(expected in p for p in new):
            failures.append(f"planting {text.strip()} in {path} is not reported as {expected!r}")

    if failures:
        print("check-layers self-test FAILED:")
        for failure in failures:
            print("  " + failure.replace("\n", "\n  "))
        return 1
    print(f"check-layers self-test passed: a clean tree passes, and {len(PLANTED)} planted "
          f"problems plus {len(real_plants)} planted in this tree are each reported")
    return 0


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--self-test", action="store_true",
                        help="check that the check catches planted cycles and includes")
    parser.add_argument("--root", default=REPO_ROOT, help="the repository to check")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    tree = read_tree(args.root)
    problems = check(tree)
    if problems:
        print(f"check-layers: {len(problems)} problem(s) in {len(tree)} files:")
        for problem in problems:
            print(problem)
        return 1
    print(f"check-layers: {len(tree)} files, no layer violations or include cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
