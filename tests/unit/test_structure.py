#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The tree's shape, as the project keeps it (issues 33 and 43):

- no circular include between modules (a .c, its .h and its -internal.h
  are one module);
- daemon/ is layered: each folder includes only the folders below it in
  LAYERS, each has a README.md, and at most DAEMON_TOP_C_MAX .c files stay at
  daemon/'s top;
- no folder holds more than FOLDER_C_MAX .c files;
- no call loop between .c files: when a.c calls b.c, nothing b.c calls
  leads back to a.c;
- no .c file over FILE_LINES_MAX lines, no function over FUNC_LINES_MAX
  outside the parser tables named below;
- tracefs is changed only from daemon/kernel/.
"""
import glob
import os
import re
import sys

ROOT = os.environ.get("SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
DIRS = ["daemon", "lib", "client", "plugin"]
# daemon/'s folders, bottom first (daemon/meson.build builds them in this order).
LAYERS = ["base", "kernel", "store", "capture", "recovery", "output", "flight", "session",
          "control"]
DAEMON_TOP_C_MAX = 2
FOLDER_C_MAX = 16
FILE_LINES_MAX = 800
FUNC_LINES_MAX = 120
# One case per attribute or option: splitting them would only scatter the table.
PARSER_TABLES = {
    ("lib/ctl/ctl-proto.c", "request_parse"),
    ("lib/ctl/ctl-reply.c", "decode_session"),
    ("daemon/store/session-file.c", "parse_line"),
    ("client/capture-options.c", "capture_option"),
}
KERNEL_FACING = re.compile(r"^daemon/kernel/[a-z-]*\.c$")
# libtracefs calls that change tracefs (reads and tracefs_set_loglevel are fine).
TRACEFS_WRITE = re.compile(
    r"\btracefs_(instance_file_(write|append|clear)|instance_(create|destroy)|"
    r"event_(enable|disable)|trace_(on|off)|tracer_(set|clear)|option_(enable|disable)|"
    r"instance_set_[a-z_]+|event_filter_(apply|clear)|filter_[a-z_]+|dynevent_(create|destroy)|"
    r"[ku]probe_[a-z_]+)\s*\(")


def sources(ext):
    for d in DIRS:
        for path in sorted(glob.glob(os.path.join(ROOT, d, "**", "*." + ext), recursive=True)):
            yield os.path.relpath(path, ROOT)


def layer(path):
    """The daemon folder a path lies in, or None outside daemon/'s folders."""
    parts = path.split("/")
    return parts[1] if parts[0] == "daemon" and len(parts) > 2 else None


def layer_problems():
    problems = []
    for path in list(sources("c")) + list(sources("h")):
        here = layer(path)
        if path.startswith("daemon/") and here is None and path.endswith(".h"):
            problems.append("%s: a header outside daemon/'s folders" % path)
        if path.startswith("daemon/") and here is not None and here not in LAYERS:
            problems.append("%s: folder %s is not in LAYERS" % (path, here))
            continue
        text = open(os.path.join(ROOT, path)).read()
        for inc in re.findall(r'#include "(daemon/[^"]+)"', text):
            there = layer(inc)
            if here is None or there is None or there not in LAYERS:
                continue
            if LAYERS.index(there) > LAYERS.index(here):
                problems.append("%s: includes %s, a layer above %s/" % (path, inc, here))
    for name in LAYERS:
        if not os.path.exists(os.path.join(ROOT, "daemon", name, "README.md")):
            problems.append("daemon/%s/: no README.md (what it owns, may include, must not do)"
                            % name)
    folders = {}
    for path in glob.glob(os.path.join(ROOT, "**", "*.c"), recursive=True):
        path = os.path.relpath(path, ROOT)
        if path.split("/")[0] in DIRS + ["tests", "bench"]:
            folders.setdefault(os.path.dirname(path), []).append(path)
    for folder, files in sorted(folders.items()):
        limit = DAEMON_TOP_C_MAX if folder == "daemon" else FOLDER_C_MAX
        if len(files) > limit:
            problems.append("%s/: %d .c files (at most %d)" % (folder, len(files), limit))
    return problems


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def exported_functions(text):
    """Functions a .c file defines without static."""
    names = set()
    for m in re.finditer(r"^([a-z_][^;{}()]*?)\b([a-z_][a-z0-9_]*)\(", text, flags=re.M):
        head = m.group(1)
        if "static" in head.split() or head.startswith(("#", "return", "else", "case")):
            continue
        end = text.find("\n{", m.end())
        semi = text.find(";", m.end())
        if end != -1 and (semi == -1 or end < semi):
            names.add(m.group(2))
    return names


def call_loops():
    """Loops in the graph of calls between .c files (each file's own calls left out)."""
    texts = {p: strip_comments_and_strings(open(os.path.join(ROOT, p)).read())
             for p in sources("c") if not p.startswith("tests/")}
    owner = {}
    for path, text in texts.items():
        for name in exported_functions(text):
            owner.setdefault(name, path)
    graph = {}
    for path, text in texts.items():
        for name in set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", text)):
            callee = owner.get(name)
            if callee and callee != path:
                graph.setdefault(path, set()).add(callee)
    return find_cycles(graph)


def find_cycles(graph):
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
    return find_cycles(graph)


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
    problems += layer_problems()
    for cycle in call_loops():
        problems.append("call loop: " + " -> ".join(cycle))
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
                problems.append("%s:%d: changes tracefs (%s); only daemon/kernel/ may"
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
