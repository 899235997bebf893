"""A source file as the mutation engine sees it: its text, (line, col) to
byte offsets, and just enough of a C++ lexer to find where a token ends and
what code is not a comment."""
import re

_PUNCT = sorted("""<<= >>= <=> -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= :: ## ...
{ } [ ] ( ) ; : ? , . + - * / % ^ & | ~ ! = < > #""".split(), key=len, reverse=True)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_NUMBER = re.compile(r"\.?\d(?:[eEpP][+-]|[\w.'])*")


class Source:
    def __init__(self, path):
        self.path = path
        # One character per byte: clang's columns and offsets count bytes.
        with open(path, "rb") as f:
            self.text = f.read().decode("latin-1")
        self.line_starts = [0]
        for i, ch in enumerate(self.text):
            if ch == "\n":
                self.line_starts.append(i + 1)
        self.code_mask = _code_mask(self.text)

    def offset(self, line, col):
        """clang's 1-based line and byte column -> offset."""
        return self.line_starts[line - 1] + col - 1

    def line_col(self, offset):
        """offset -> 1-based (line, column), as Stryker reports locations."""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.line_starts[lo] + 1

    def token_end(self, offset):
        """The offset just past the token starting at `offset`."""
        t = self.text
        for rx in (_IDENT, _NUMBER):
            m = rx.match(t, offset)
            if m:
                return m.end()
        if t[offset] in "\"'":
            q, i = t[offset], offset + 1
            while i < len(t) and t[i] != q:
                i += 2 if t[i] == "\\" else 1
            return i + 1
        for p in _PUNCT:
            if t.startswith(p, offset):
                return offset + len(p)
        return offset + 1

    def is_code(self, lo, hi):
        """Both ends of [lo, hi) are code (comments inside are copied as they are)."""
        return self.code_mask[lo] and self.code_mask[hi - 1]

    def back_over_space(self, offset):
        """The offset just past the last non-space character before `offset`."""
        while offset > 0 and self.text[offset - 1].isspace():
            offset -= 1
        return offset


def _code_mask(text):
    """True for characters outside comments and string literals."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
        elif text[i] == "#" and (i == 0 or text[text.rfind("\n", 0, i) + 1 : i].strip() == ""):
            j = text.find("\n", i)  # preprocessor lines are never mutated
            j = n if j < 0 else j
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            mask[k] = False
        i = j
    return mask
