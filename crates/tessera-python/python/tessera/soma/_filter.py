"""Value filters (TileDB-Py's query condition syntax, as tiledbsoma takes
them) made ready for tessera's condition parser, which has the same
grammar: literals compared with an enumerated column are its values
(``cell_type == 'B cell'``), so they become the keys stored for them.
"""

import re

from ._errors import SOMAValueError

_TOKEN = re.compile(
    r"""\s+|(?P<str>'[^']*'|"[^"]*")|(?P<op><=|>=|==|!=|<|>|=)|(?P<punct>[()\[\],&|])|(?P<word>[^\s()\[\],<>=!'"&|]+)"""
)


def _tokens(text):
    at = 0
    out = []
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None:
            raise SOMAValueError(f"value_filter: at byte {at}: unexpected {text[at]!r}")
        at = m.end()
        kind = m.lastgroup
        if kind is not None:
            out.append((kind, m.group(kind)))
    return out


def _literal_value(token, kind):
    return token[1:-1] if kind == "str" else token


def translate(text, enumerations):
    """``text`` with literals compared with an enumerated column
    (``enumerations``: column name to its list of values) replaced by their
    keys. A value the enumeration lacks matches no cell: ``==`` it becomes
    ``in []``, ``!=`` it ``not in []`` (true of every non-null cell)."""
    if not text or not enumerations:
        return text
    toks = _tokens(text)
    out = [t for _, t in toks]
    i = 0
    while i < len(toks):
        kind, tok = toks[i]
        values = enumerations.get(tok) if kind == "word" else None
        if values is None:
            i += 1
            continue
        j = i + 1
        if j + 1 < len(toks) and toks[j][0] == "op":
            op = toks[j][1]
            if op not in ("==", "=", "!="):
                raise SOMAValueError(
                    f"value_filter: `{tok} {op}`: an enumerated column compares only with ==, != and in")
            key = _key(values, *toks[j + 1])
            if key is None:
                out[j], out[j + 1] = ("not in" if op == "!=" else "in"), "[]"
            else:
                out[j + 1] = str(key)
            i = j + 2
            continue
        if j < len(toks) and toks[j][1].lower() == "not":
            j += 1
        if j + 1 < len(toks) and toks[j][1].lower() == "in" and toks[j + 1][1] == "[":
            k = j + 2
            keys = []
            while k < len(toks) and toks[k][1] != "]":
                if toks[k][0] in ("str", "word"):
                    key = _key(values, *toks[k])
                    if key is not None:
                        keys.append(str(key))
                out[k] = ""
                k += 1
            out[j + 1] = "[" + ", ".join(keys)
            i = k + 1
            continue
        i += 1
    return " ".join(t for t in out if t)


def _key(values, kind, token):
    literal = _literal_value(token, kind)
    for k, v in enumerate(values):
        if (v if isinstance(v, str) else str(v)) == literal or (not isinstance(v, str) and _same_number(v, literal)):
            return k
    return None


def _same_number(v, literal):
    try:
        return float(literal) == float(v)
    except (TypeError, ValueError):
        return False


def fields(text, columns):
    """The columns among ``columns`` that ``text`` names, in order of first mention."""
    if not text:
        return []
    out = []
    for kind, tok in _tokens(text):
        if kind == "word" and tok in columns and tok not in out:
            out.append(tok)
    return out
