#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The tree's shape, as the project keeps it (issue 33):

- no circular include between modules (a .c, its .h and its -internal.h
  are one module);
- no .c file over FILE_LINES_MAX lines, no function over FUNC_LINES_MAX
  outside the parser tables named below;
- tracefs is changed only from the kernel-facing files (instance*, probe*).
"""
import glob
import os
import re
import sys

ROOT = os.environ.get("SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
DIRS = ["daemon", "lib", "client"]
FILE_LINES_MAX = 800
FUNC_LINES_MAX = 120
# One case per attribute or option: splitting them would only scatter the table.
PARSER_TABLES = {
    ("lib/ctl-proto.c", "request_parse"),
    ("lib/ctl-reply.c", "decode_session"),
    ("daemon/session-file.c", "parse_line"),
    ("client/capture-options.c", "capture_option"),
}
KERNEL_FACING = re.compile(r"^daemon/(instance|probe)[a-z-]*\.c$")
# libtracefs calls that change tracefs (reads and tracefs_set_loglevel are fine).
TRACEFS_WRITE = re.compile(
    r"\btracefs_(instance_file_(write|append|clear)|instance_(create|destroy)|"
    r"event_(enable|disable)|trace_(on|off)|tracer_(set|clear)|option_(enable|disable)|"
    r"instance_set_[a-z_]+|event_filter_(apply|clear)|filter_[a-z_]+|dynevent_(create|destroy)|"
    r"[ku]probe_[a-z_]+)\s*\(")


def sources(ext):
    for d in DIRS:
        for path in sorted(glob.glob(os.path.join(ROOT, d, "*." + ext))):
            yield os.path.relpath(path, ROOT)


def module(path):
    base = re.sub(r"\.(c|h)$", "", path)
    return re.sub(r"-internal$", "", base)


def include_cycles():
    graph = {}
    for path in list(sources("c")) + list(sources("h")):
        text = open(os.path.join(ROOT, path)).read()
        for inc in re.findall(r'#include "((?:%s)/[^"]+)"' % "|".join(DIRS), text):
            if module(inc) != module(path):
                graph.setdefault(module(path), set()).add(module(inc))
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def functions(text):
    """(name, lines) of every function defined at the top level."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^[a-z_].*?\b([a-z_][a-z0-9_]*)\(", lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            j = i
            while j < len(lines) and lines[j] != "{":
                if lines[j].rstrip().endswith(";"):
                    break
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j
                while k < len(lines) and lines[k] != "}":
                    k += 1
                yield m.group(1), k - i + 1
                i = k
        i += 1


def main():
    problems = []
    for cycle in include_cycles():
        problems.append("circular include: " + " -> ".join(cycle))
    for path in sources("c"):
        text = open(os.path.join(ROOT, path)).read()
        n = text.count("\n")
        if n > FILE_LINES_MAX:
            problems.append("%s: %d lines (at most %d)" % (path, n, FILE_LINES_MAX))
        for name, length in functions(text):
            if length > FUNC_LINES_MAX and (path, name) not in PARSER_TABLES:
                problems.append("%s: %s() is %d lines (at most %d)" %
                                (path, name, length, FUNC_LINES_MAX))
        if path.startswith("daemon/") and not KERNEL_FACING.match(path):
            for m in TRACEFS_WRITE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                problems.append("%s:%d: changes tracefs (%s); only instance* and probe* may"
                                % (path, line, m.group(0).rstrip("(").strip()))
    for (path, name) in sorted(PARSER_TABLES):
        text = open(os.path.join(ROOT, path)).read()
        if name not in dict(functions(text)):
            problems.append("%s: parser table %s() is gone: drop it from PARSER_TABLES" %
                            (path, name))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
