"""An independent reading of the operators' output contracts (`tgms tools --format json`,
spec notation such as `list<obj{vid: hex, label: str|null}>`) as pyarrow types, to check the
schemas the package declares. Written apart from the Rust mapping on purpose."""

import re

import pyarrow as pa

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|[<>{}:,|*])")


def _tokens(text):
    pos, out = 0, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad contract {text!r} at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out


def parse(text):
    """The contract as nested tuples: ("int",), ("list", t), ("obj", [(name, t)]),
    ("openobj",), ("null", t)."""
    toks = _tokens(text)
    i = 0

    def ty():
        nonlocal i
        name = toks[i]
        i += 1
        if name == "list":
            assert toks[i] == "<"
            i += 1
            t = ty()
            assert toks[i] == ">"
            i += 1
            base = ("list", t)
        elif name == "obj":
            assert toks[i] == "{"
            i += 1
            if toks[i] == "*":
                i += 2
                base = ("openobj",)
            else:
                fields = []
                while True:
                    f = toks[i]
                    assert toks[i + 1] == ":"
                    i += 2
                    fields.append((f, ty()))
                    if toks[i] == "}":
                        i += 1
                        break
                    assert toks[i] == ","
                    i += 1
                base = ("obj", fields)
        else:
            base = (name,)
        if i < len(toks) and toks[i] == "|" and i + 1 < len(toks) and toks[i + 1] == "null":
            i += 2
            return ("null", base)
        return base

    t = ty()
    assert i == len(toks), text
    return t


def arrow_type(c):
    """(pyarrow type, nullable). Every field is nullable (operators leave out fields that
    do not apply to a row); the type is the contract's."""
    return _type(c), True


def _type(c):
    kind = c[0]
    if kind == "null":
        return _type(c[1])
    if kind == "int":
        return pa.int64()
    if kind in ("float", "number"):
        return pa.float64()
    if kind == "bool":
        return pa.bool_()
    if kind in ("str", "uid", "hex", "any", "openobj"):
        return pa.string()
    if kind == "list":
        return pa.list_(pa.field("item", _type(c[1]), nullable=True))
    if kind == "obj":
        return pa.struct([pa.field(name, _type(t), nullable=True) for name, t in c[1]])
    raise ValueError(c)


def is_json_text(c):
    return c[0] in ("any", "openobj") or (c[0] == "null" and is_json_text(c[1]))
