"""The schemata renderer and the source model on their own (no compiler):
nested sites render inside their parents' operands, each alternative replaces
exactly its own span, and positions are byte positions."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import schemata  # noqa: E402
from sites import Alternative, Site  # noqa: E402
from sources import Source  # noqa: E402


def source(text):
    f = tempfile.NamedTemporaryFile("wb", suffix=".h", delete=False)
    f.write(text.encode("utf-8"))
    f.close()
    return Source(f.name)


def test_nested_sites_render_inside_their_parents_operands():
    src = source("a + b * c")
    outer = Site(src.path, 0, 9, [(0, 1), (4, 9)], [Alternative("ArithmeticOperator", [0, " - ", 1], "-")])
    inner = Site(src.path, 4, 9, [(4, 5), (8, 9)], [Alternative("ArithmeticOperator", [0, " / ", 1], "/")])
    top, crossing = schemata.build_tree([inner, outer])
    assert crossing == [] and top == [outer] and outer.children == [inner]
    schemata.assign_ids({src.path: [outer, inner]})
    text = schemata.render_file(src, top)
    assert text.startswith(schemata.HEADER)
    body = text[len(schemata.HEADER):]
    # The outer mutant keeps the inner site inside its right operand.
    assert body == ("(RACEORACLE_MUTANT(1) ? (a - (RACEORACLE_MUTANT(2) ? (b / c) : (b * c))) : "
                    "(a + (RACEORACLE_MUTANT(2) ? (b / c) : (b * c))))")


def test_crossing_sites_are_left_out():
    src = source("a + b * c")
    s1 = Site(src.path, 0, 5, [(0, 1), (4, 5)], [Alternative("ArithmeticOperator", [0, " - ", 1], "-")])
    s2 = Site(src.path, 4, 9, [(4, 5), (8, 9)], [Alternative("ArithmeticOperator", [0, " / ", 1], "/")])
    top, crossing = schemata.build_tree([s1, s2])
    assert top == [s1] and crossing == [s2]


def test_conditions_render_as_bool_in_every_branch():
    src = source("if (p) x();")
    s = Site(src.path, 4, 5, [(4, 5)], [Alternative("ConditionalExpression", ["true"], "true")], boolean=True)
    top, _ = schemata.build_tree([s])
    schemata.assign_ids({src.path: [s]})
    assert schemata.render_file(src, top)[len(schemata.HEADER):] == "if ((RACEORACLE_MUTANT(1) ? bool(true) : bool(p))) x();"


def test_offsets_count_bytes_as_clang_does():
    src = source("// § two bytes\nint x = 1;\n")
    lo = src.offset(2, 9)  # clang's column of `1` is a byte column
    assert src.text[lo] == "1"
    assert src.line_col(lo) == (2, 9)
    assert src.token_end(src.offset(2, 1)) == src.offset(2, 4)  # `int`


def test_comments_and_strings_are_not_code():
    src = source('a /* b */ "c" // d\ne')
    assert src.is_code(0, 1) and not src.is_code(4, 5) and not src.is_code(11, 12) and not src.is_code(16, 17)
    assert src.is_code(19, 20)
