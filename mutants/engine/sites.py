"""The mutation operators: where in the kernel sources a mutant can be made,
and what each one replaces. Operators (mutants/engine/README.md has the table):

  EqualityOperator     relational/equality replacement, Stryker's set
  ArithmeticOperator   + <-> -, * <-> /, % -> *
  LogicalOperator      && <-> ||
  BooleanLiteral       !a -> a
  UnaryOperator        -a -> a
  ConstantReplacement  integer literals +-1 (0 -> 1), float literals -> 0 / 1,
                       INFINITY -> FLT_MAX / 0, NAN -> 0, INT_MAX -> 0,
                       named constants (kName) x10 / /10 (float) or +-1 (integer)
  ConditionalExpression if / ?: conditions forced true and false, loop conditions false
  IndexShift           a[i] -> a[i + 1], a[i - 1]
  MinMaxSwap           fmaxf <-> fminf, warp_max <-> warp_min
  NanHandling          fmaxf/fminf -> std::max/std::min semantics (NaN kept or dropped by
                       argument order); x != x -> false
  BarrierRemoval       __syncthreads() removed

A site is a span of one file with holes (the spans of its operands, where
nested sites render) and alternatives made of text and holes.
"""
import re
from dataclasses import dataclass, field

from ast_scan import if_condition_index, walk


@dataclass
class Alternative:
    mutator: str
    parts: list  # str, or int: a hole of the site
    shown: str  # the replacement as a report shows it


@dataclass
class Site:
    file: str
    lo: int
    hi: int
    holes: list
    alternatives: list
    order: int = 0  # among sites with the same span: lower is outer
    boolean: bool = False  # a condition: every branch is rendered as bool(...)
    children: list = field(default_factory=list)


_ROR = {"<": ["<=", ">="], "<=": ["<", ">"], ">": [">=", "<="], ">=": [">", "<"], "==": ["!="], "!=": ["=="]}
_AOR = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "%": ["*"]}
_LOR = {"&&": ["||"], "||": ["&&"]}
_SWAP = {"fmaxf": "fminf", "fminf": "fmaxf", "fmax": "fmin", "fmin": "fmax",
         "device::warp_max": "device::warp_min", "device::warp_min": "device::warp_max"}
_NAN_SELECT = {"fmaxf": "raceoracle_schemata_std_max", "fminf": "raceoracle_schemata_std_min"}
_MACRO_CONSTANTS = {"INFINITY": ["FLT_MAX", "0.0f"], "NAN": ["0.0f"], "INT_MAX": ["0"]}
_NAMED_CONSTANT = re.compile(r"^k[A-Z]\w*$")


def _span(src, node):
    if node.begin is None or node.end is None or node.file != src.path or node.end[0] != src.path:
        return None
    lo = src.offset(node.begin[1], node.begin[2])
    hi = src.token_end(src.offset(node.end[1], node.end[2]))
    return (lo, hi) if lo < hi and src.is_code(lo, hi) else None


def _type(node):
    q = node.quoted()
    return q[0] if q else ""


def _plain(node):
    """Skips implicit wrappers to the node as written."""
    while node.kind == "ImplicitCastExpr" and node.children:
        node = node.children[0]
    return node


def _touches_defect_switch(src, lo, hi, nodes):
    """Code that selects a deliberate defect (kernels/defect.h) is the named
    mutants' switch, not kernel logic: mutating it would build a named mutant."""
    if "Defect::" in src.text[lo:hi]:
        return True
    return any("kernels::Defect" in _type(n) for n in nodes)


def _operator_site(src, node, span):
    ops = node.quoted()
    if len(ops) < 2 or len(node.children) < 2:
        return []
    op = ops[-1]
    lhs, rhs = node.children[0], node.children[1]
    ls, rs = _span(src, lhs), _span(src, rhs)
    if not ls or not rs or ls[0] != span[0] or rs[1] != span[1]:
        return []
    op_hi = src.back_over_space(rs[0])
    op_lo = op_hi - len(op)
    if src.text[op_lo:op_hi] != op or op_lo < ls[1]:
        return []
    if _touches_defect_switch(src, *span, [lhs, rhs]):
        return []
    holes = [ls, rs]
    alts = []

    def binary(mutator, new_op):
        alts.append(Alternative(mutator, [0, src.text[ls[1]:op_lo] + new_op + src.text[op_hi:rs[0]], 1], new_op))

    if op in _ROR:
        if op in ("==", "!=") and src.text[ls[0]:ls[1]].strip() == src.text[rs[0]:rs[1]].strip():
            # x != x is a NaN test: a kernel that forgets NaN
            alts.append(Alternative("NanHandling", ["false" if op == "!=" else "true"], "false" if op == "!=" else "true"))
        else:
            for new in _ROR[op]:
                binary("EqualityOperator", new)
    elif op in _AOR:
        if "*" in _type(rhs) or ("*" in _type(lhs) and op not in ("+", "-")):
            return []  # pointer arithmetic: only ptr +- int has a mutant
        for new in _AOR[op]:
            binary("ArithmeticOperator", new)
    elif op in _LOR:
        for new in _LOR[op]:
            binary("LogicalOperator", new)
    if not alts:
        return []
    return [Site(src.path, span[0], span[1], holes, alts)]


def _unary_site(src, node, span):
    q = node.quoted()
    if not q or "prefix" not in node.rest or not node.children:
        return []
    op = q[-1]
    inner = _span(src, node.children[0])
    if not inner or inner[1] != span[1] or src.text[span[0]:span[0] + len(op)] != op:
        return []
    if _touches_defect_switch(src, *span, [node.children[0]]):
        return []
    if op == "!":
        return [Site(src.path, span[0], span[1], [inner], [Alternative("BooleanLiteral", [0], "(removed !)")],
                     boolean=True)]
    if op == "-":
        return [Site(src.path, span[0], span[1], [inner], [Alternative("UnaryOperator", [0], "(removed -)")])]
    return []


def _literal_site(src, node, span):
    text = src.text[span[0]:span[1]]
    alts = []
    if node.kind == "IntegerLiteral":
        m = re.match(r"^(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)$", text)
        if not m:
            return []
        v, suffix = int(m.group(1), 0), m.group(2)
        values = [1] if v == 0 else [v + 1, v - 1]
        alts = [Alternative("ConstantReplacement", [f"{w}{suffix}"], f"{w}{suffix}") for w in values]
    else:
        suffix = "f" if text.endswith(("f", "F")) else ""
        try:
            v = float.fromhex(text.rstrip("fF")) if "x" in text.lower() else float(text.rstrip("fF"))
        except ValueError:
            return []
        for w in (0.0, 1.0):
            if v != w:
                alts.append(Alternative("ConstantReplacement", [f"{w:.1f}{suffix}"], f"{w:.1f}{suffix}"))
    return [Site(src.path, span[0], span[1], [], alts)] if alts else []


def _named_constant_site(src, node, span):
    q = node.quoted()
    names = [s for s in q if _NAMED_CONSTANT.match(s)]
    if "Var" not in node.rest.split() or not names:
        return []
    ty = q[0]
    if "float" in ty or "double" in ty:
        alts = [Alternative("ConstantReplacement", ["(", 0, " * 10)"], "x10"),
                Alternative("ConstantReplacement", ["(", 0, " / 10)"], "/10")]
    elif re.search(r"\b(int|long|unsigned|int32_t|int64_t|size_t)\b", ty):
        alts = [Alternative("ConstantReplacement", ["(", 0, " + 1)"], "+1"),
                Alternative("ConstantReplacement", ["(", 0, " - 1)"], "-1")]
    else:
        return []
    return [Site(src.path, span[0], span[1], [span], alts)]


def _call_site(src, node, span):
    paren = src.text.find("(", span[0], span[1])
    if paren < 0:
        return []
    callee = src.text[span[0]:paren].strip()
    args = (paren, span[1])
    alts = []
    if callee == "__syncthreads":
        alts.append(Alternative("BarrierRemoval", ["(void)0"], "(removed)"))
    if callee in _SWAP:
        alts.append(Alternative("MinMaxSwap", [_SWAP[callee], 0], _SWAP[callee]))
    if callee in _NAN_SELECT:
        alts.append(Alternative("NanHandling", [_NAN_SELECT[callee], 0], "std::max semantics"))
    if not alts:
        return []
    return [Site(src.path, span[0], span[1], [args], alts)]


def _condition_site(src, cond, loop):
    span = _span(src, cond)
    if not span or cond.const_context or _touches_defect_switch(src, *span, [cond]):
        return []
    alts = [Alternative("ConditionalExpression", ["false"], "false")]
    if not loop:
        alts.insert(0, Alternative("ConditionalExpression", ["true"], "true"))
    return [Site(src.path, span[0], span[1], [span], alts, order=-1, boolean=True)]


def _index_site(src, node):
    if len(node.children) < 2:
        return []
    idx = node.children[1]
    span = _span(src, idx)
    if not span or _touches_defect_switch(src, *span, [idx]):
        return []
    alts = [Alternative("IndexShift", ["(", 0, ") + 1"], "+ 1"), Alternative("IndexShift", ["(", 0, ") - 1"], "- 1")]
    return [Site(src.path, span[0], span[1], [span], alts, order=-2)]


_DEFECT_TEST = re.compile(r"^\s*D\s*(==|!=)\s*Defect::\w+\s*$")


def _live_nodes(src, nodes):
    """The nodes the real kernel (D = none) can run: a branch taken only when
    `D == Defect::name` (or skipped only then, for `!=`) is a named mutant's
    code, and is left out with everything under it."""
    for node in nodes:
        yield node
        kids = node.children
        if node.kind in ("IfStmt", "ConditionalOperator") and kids:
            i = if_condition_index(node) if node.kind == "IfStmt" else 0
            span = _span(src, _plain(kids[i])) if i < len(kids) else None
            m = _DEFECT_TEST.match(src.text[span[0]:span[1]]) if span else None
            if m:
                dead = i + 1 if m.group(1) == "==" else i + 2  # the branch D = none never takes
                kids = [k for j, k in enumerate(kids) if j != dead]
        yield from _live_nodes(src, kids)


def node_sites(src, roots):
    """Every site the operators find in `src` among the dumped nodes."""
    found = []
    for node in _live_nodes(src, roots):
        if node.file != src.path or node.const_context:
            continue
        k = node.kind
        if k == "IfStmt" or k == "ConditionalOperator" or k == "ForStmt":
            i = if_condition_index(node) if k == "IfStmt" else (2 if k == "ForStmt" else 0)
            if i < len(node.children) and node.children[i].kind != "<<<NULL>>>":
                if not (k == "IfStmt" and "constexpr" in node.rest):
                    found += _condition_site(src, _plain(node.children[i]), loop=k == "ForStmt")
            continue
        if k == "ArraySubscriptExpr":
            found += _index_site(src, node)
            continue
        span = _span(src, node)
        if not span:
            continue
        if k == "BinaryOperator":
            found += _operator_site(src, node, span)
        elif k == "UnaryOperator":
            found += _unary_site(src, node, span)
        elif k in ("IntegerLiteral", "FloatingLiteral"):
            found += _literal_site(src, node, span)
        elif k == "DeclRefExpr":
            found += _named_constant_site(src, node, span)
        elif k == "CallExpr":
            found += _call_site(src, node, span)
    return found


def macro_sites(src, bodies):
    """Constants that are macros (INFINITY, NAN, INT_MAX): the AST places
    them in the system headers, so they are found as tokens of the function
    bodies (`bodies`: spans of device code)."""
    found = []
    for name, values in _MACRO_CONSTANTS.items():
        for m in re.finditer(r"\b%s\b" % name, src.text):
            lo, hi = m.span()
            if not src.is_code(lo, hi) or not any(a <= lo and hi <= b for a, b in bodies):
                continue
            alts = [Alternative("ConstantReplacement", [v], v) for v in values]
            found.append(Site(src.path, lo, hi, [], alts))
    return found


_DEVICE = re.compile(r"\b(__device__|__global__)\b")


def device_bodies(src, roots):
    """Spans of the bodies of device functions (`__global__`, `__device__`),
    lambdas in them included: the code the property suite judges. A body is
    a function's if its CompoundStmt is a root (the declaration began in a
    macro) or a function's child; its declaration is the code since the last
    `;` or `}` before it."""
    spans = []
    for node in walk(roots):
        if node.kind != "CompoundStmt" or node.file != src.path or node.const_context:
            continue
        if node.parent is not None and node.parent.kind not in ("FunctionDecl", "CXXMethodDecl"):
            continue
        s = _span(src, node)
        if not s:
            continue
        k = s[0] - 1
        while k >= 0 and not (src.code_mask[k] and src.text[k] in ";}"):
            k -= 1
        declaration = "".join(ch for ch, code in zip(src.text[k + 1:s[0]], src.code_mask[k + 1:s[0]]) if code)
        if _DEVICE.search(declaration):
            spans.append(s)
    return spans


def in_spans(site, spans):
    return any(a <= site.lo and site.hi <= b for a, b in spans)


def const_spans(src, roots):
    """Spans that must stay constant expressions (a macro constant there keeps its value)."""
    return [s for n in walk(roots) if n.const_context and n.file == src.path for s in [_span(src, n)] if s]
