"""Reads clang's text AST dump of one translation unit and returns the nodes
that lie in the files being mutated, with their source ranges as byte offsets.

Why the text dump: clang-14 is already a dependency (libFuzzer), its JSON dump
of a kernel TU is ~700 MB while the text dump is ~50 MB and streams line by
line. The dump elides a location's file and line when they equal the previous
printed location's, so every location on every line is read in print order to
keep that state (clang's TextNodeDumper::dumpLocation).
"""
import os
import re
import subprocess

_LOC_LINE = re.compile(r"^(.*):(\d+):(\d+)$")
_LOC_COL = re.compile(r"^col:(\d+)$")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


class Node:
    __slots__ = ("kind", "file", "begin", "end", "rest", "children", "const_context", "parent")

    def __init__(self, kind, file, begin, end, rest, const_context, parent):
        self.kind, self.file, self.begin, self.end, self.rest = kind, file, begin, end, rest
        self.children, self.const_context, self.parent = [], const_context, parent

    def quoted(self):
        """The quoted fields after the range: type(s), then opcode for operators."""
        return _QUOTED.findall(self.rest)


class _Locator:
    """clang's location state: the last printed file and line."""

    def __init__(self, cwd):
        self.file, self.line, self.cwd = None, 0, cwd

    def read(self, text):
        """One printed location -> (file, line, col), updating the state."""
        text = text.strip()
        if text in ("invalid sloc", "<invalid sloc>"):
            return None
        m = _LOC_COL.match(text)
        if m:
            return (self.file, self.line, int(m.group(1)))
        m = _LOC_LINE.match(text)
        if not m:
            return None
        name, line, col = m.group(1), int(m.group(2)), int(m.group(3))
        if name != "line":
            self.file = name if name.startswith("<") else os.path.normpath(os.path.join(self.cwd, name))
        self.line = line
        return (self.file, line, col)


def _split_range(line, start):
    """The text inside the '<...>' that starts at `start`, and the index after it."""
    depth, i = 0, start
    while i < len(line):
        if line[i] == "<":
            depth += 1
        elif line[i] == ">":
            depth -= 1
            if depth == 0:
                return line[start + 1 : i], i + 1
        i += 1
    return None, start


_HEAD = re.compile(r"^([| `]*)-?([A-Za-z<][\w<>]*)(?: 0x[0-9a-f]+)?((?: (?:parent|prev) 0x[0-9a-f]+)*)")
# Contexts whose expressions must stay constant expressions: a runtime switch
# cannot appear there.
_CONST_KINDS = {"ConstantExpr", "StaticAssertDecl", "TemplateArgument", "NonTypeTemplateParmDecl",
                "TemplateTypeParmDecl", "EnumConstantDecl"}


def _is_const_context(kind, rest):
    if kind in _CONST_KINDS:
        return True
    if kind == "VarDecl" and re.search(r"\bconstexpr\b", rest):
        return True
    if kind in ("FunctionDecl", "CXXMethodDecl") and re.search(r"\bconstexpr\b", rest):
        return True
    return False


def dump_nodes(command, targets, cwd):
    """Runs `command` (a clang++ -fsyntax-only -Xclang -ast-dump invocation)
    and returns the top nodes whose begin lies in one of `targets` (absolute
    paths), each with its subtree. Offsets are resolved later (sources.py)."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace")
    loc = _Locator(cwd)
    stack = []  # (depth, node or None, const_context)
    roots = []
    for raw in proc.stdout:
        line = raw.rstrip("\n")
        m = _HEAD.match(line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        kind = m.group(2)
        i = m.end()
        begin = end = None
        if i < len(line) and line[i:i + 2] == " <":
            inner, i = _split_range(line, i + 1)
            if inner is not None:
                parts = inner.split(", ")
                begin = loc.read(parts[0])
                end = loc.read(parts[1]) if len(parts) > 1 else begin
        rest = line[i:]
        # A declaration's own location follows its range; it moves the state too.
        tok = rest.strip()
        if tok.startswith("<scratch space>") or tok.startswith("<built-in>") or tok.startswith("<invalid sloc>"):
            first = tok[: tok.find(">") + 1] + tok[tok.find(">") + 1 :].split(" ", 1)[0]
            loc.read(first)
        elif tok:
            first = tok.split(" ", 1)[0]
            if _LOC_COL.match(first) or (_LOC_LINE.match(first) and not first.startswith("'")):
                loc.read(first)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else None
        parent_const = stack[-1][2] if stack else False
        const = parent_const or _is_const_context(kind, rest)
        # The condition of `if constexpr` is a constant expression; its branches are not.
        if stack and stack[-1][1] is not None and stack[-1][1].kind == "IfStmt" and "constexpr" in stack[-1][1].rest:
            if if_condition_index(stack[-1][1]) == len(stack[-1][1].children):
                const = True
        node = None
        in_target = begin is not None and begin[0] in targets and end is not None and end[0] == begin[0]
        if in_target or parent is not None:
            node = Node(kind, begin[0] if begin else None, begin, end, rest, const, parent)
            if parent is not None:
                parent.children.append(node)
            else:
                roots.append(node)
        stack.append((depth, node, const))
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise RuntimeError("clang AST dump failed:\n" + err[-4000:])
    return roots


def if_condition_index(if_node):
    """Index of an IfStmt's condition among its children (clang 14 order:
    [init] [condition variable] condition then [else])."""
    return ("has_init" in if_node.rest) + ("has_var" in if_node.rest)


def walk(nodes):
    for n in nodes:
        yield n
        yield from walk(n.children)
