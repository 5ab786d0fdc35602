"""Query conditions in TileDB-Py's grammar: a Python expression of
comparisons (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``, chained as in
``0.2 < D < 0.75``), memberships (``x in [1, 2]``, ``not in``), joined by
``and``/``&``, ``or``/``|`` and ``not``. A name with a space or dot is
written ``attr("a b")`` / ``dim("a b")``, a value may be cast with
``val(...)``, and ``x == None`` / ``x != None`` ask for nulls.

The expression is parsed with Python's own parser when it is made, and
bound to an array's schema when a query runs: names are checked, values
cast to the field's type as TileDB-Py casts them, and the result handed to
tessera's condition parser as text.

    >>> print(QueryCondition("attr('a b') < 5 and 0 < d <= 3")._native_text(None))
    (`a b` < 5 and (`d` > 0 and `d` <= 3))
"""

import ast

import numpy as np

from .libtiledb import TileDBError

_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
# The operator that holds when the two sides trade places.
_PYTHON_OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class QueryCondition:
    """A condition a query's cells must meet (see the module)."""

    def __init__(self, expression, ctx=None):
        self.expression = expression
        self.ctx = ctx
        try:
            self.tree = ast.parse(f"({expression})", mode="eval")
        except SyntaxError:
            raise TileDBError(f"Could not parse the given QueryCondition statement: {expression}") from None

    def __repr__(self):
        return f"QueryCondition(expression={self.expression!r})"

    def _native_text(self, schema):
        """The condition in tessera's grammar, bound to ``schema`` (names
        checked, values cast); ``schema=None`` leaves both as written.
        Binding errors read as TileDB-Py's do: the Python error's type,
        then its message."""
        try:
            text = _Binder(schema).condition(self.tree.body)
        except (TileDBError, OverflowError, ValueError, TypeError) as e:
            raise TileDBError(f"{type(e).__name__}: {e}") from None
        return text


def native_condition(cond, schema):
    """``cond`` (None, an expression string or a :class:`QueryCondition`)
    as tessera's condition text, or None when there is no condition."""
    if cond is None or (isinstance(cond, str) and not cond.strip()):
        return None
    if isinstance(cond, str):
        cond = QueryCondition(cond)
    if not isinstance(cond, QueryCondition):
        raise TileDBError(f"cond must be a string or a QueryCondition, not {type(cond).__name__}")
    return cond._native_text(schema)


class _Binder:
    """Turns the parsed expression into tessera's condition text."""

    def __init__(self, schema):
        self.schema = schema

    def condition(self, node):
        if isinstance(node, ast.BoolOp):
            word = " and " if isinstance(node.op, ast.And) else " or "
            return "(" + word.join(self.condition(v) for v in node.values) + ")"
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.BitAnd, ast.BitOr)):
                word = " and " if isinstance(node.op, ast.BitAnd) else " or "
                return f"({self.condition(node.left)}{word}{self.condition(node.right)})"
            raise TileDBError(f"Unsupported binary operator: {ast.dump(node.op)}. Only & and | are supported.")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"not {self.condition(node.operand)}"
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Attribute):
            raise TileDBError(
                f"Unhandled dot operator in {ast.dump(node)} -- if your attribute name has a dot in it, e.g. "
                '`orig.ident`, please wrap it with `attr("...")`, e.g. `attr("orig.ident")`')
        raise TileDBError("Malformed query condition statement. A query condition must be made up of one or "
                          "more boolean expressions.")

    def compare(self, node):
        first = node.ops[0]
        if isinstance(first, ast.Is):
            raise TileDBError("the `is` operator is not supported")
        if isinstance(first, ast.IsNot):
            raise TileDBError("the `is not` operator is not supported")
        if isinstance(first, (ast.In, ast.NotIn)):
            return self.membership(node.left, first, node.comparators[0])
        sides = [node.left, *node.comparators]
        parts = [self.comparison(lhs, _OPS[type(op)], rhs) for lhs, op, rhs in zip(sides, node.ops, sides[1:])]
        return parts[0] if len(parts) == 1 else "(" + " and ".join(parts) + ")"

    def comparison(self, lhs, op, rhs):
        for side in (lhs, rhs):
            if isinstance(side, ast.Attribute):
                self.condition(side)
        if not _is_variable(lhs):
            lhs, rhs, op = rhs, lhs, _MIRRORED[op]
        name = self.variable(lhs)
        value = _value(rhs)
        if value is None:
            if op not in ("==", "!="):
                raise TileDBError(f"None compares only with == and !=, not {op}")
            return f"{_field(name)} is {'not ' if op == '!=' else ''}null"
        labels = self._labels(name)
        if labels is not None:
            # A label compares as labels do; the cells hold their indices.
            test = _PYTHON_OPS[op]
            codes = [i for i, label in enumerate(labels) if test(label, self._label_value(labels, value))]
            return f"{_field(name)} in [{', '.join(map(str, codes))}]"
        return f"{_field(name)} {op} {self.literal(name, value)}"

    def membership(self, left, op, right):
        if not isinstance(right, ast.List):
            raise TileDBError("`in` operator syntax must be written as `variable in ['l', 'i', 's', 't']`")
        if isinstance(left, ast.Call):
            name = self.variable(left)
        elif isinstance(left, ast.Name):
            name = self.variable(left)
        else:
            raise TileDBError(f"cannot handle query condition left-hand side of type '{type(left)}'")
        values = [_value(v) for v in right.elts]
        if not values:
            raise TileDBError("At least one value must be provided to the set membership")
        word = "in" if isinstance(op, ast.In) else "not in"
        labels = self._labels(name)
        if labels is not None:
            wanted = {self._label_value(labels, v) for v in values}
            codes = [i for i, label in enumerate(labels) if label in wanted]
            return f"{_field(name)} {word} [{', '.join(map(str, codes))}]"
        return f"{_field(name)} {word} [{', '.join(self.literal(name, v) for v in values)}]"

    def variable(self, node):
        """The field a name node names, checked against the schema."""
        if not _is_variable(node):
            raise TileDBError(f"Incorrect type for variable name: {ast.dump(node)}")
        name = node.id if isinstance(node, ast.Name) else _call_argument(node)
        if not isinstance(name, str):
            raise TileDBError(f"Incorrect type for variable name: {ast.dump(node)}")
        schema = self.schema
        if schema is None:
            return name
        if schema.domain.has_dim(name) and not schema.sparse:
            raise TileDBError(
                f"Cannot apply query condition to dimensions on dense arrays. {name} is a dimension.")
        if isinstance(node, ast.Call):
            if node.func.id == "attr" and not schema.has_attr(name):
                raise TileDBError(f"{name} is not an attribute.")
            if node.func.id == "dim" and not schema.domain.has_dim(name):
                raise TileDBError(f"{name} is not a dimension.")
        if not (schema.has_attr(name) or schema.domain.has_dim(name)):
            raise TileDBError(f"{name} is not an attribute or dimension of the array")
        return name

    def literal(self, name, value):
        """``value`` cast to the type of ``name``'s values, as text."""
        dtype = None if self.schema is None else self._value_dtype(name)
        if dtype is None:
            return _quoted(value) if isinstance(value, (str, bytes)) else repr(value)
        if dtype.kind in "SUa" or dtype == np.dtype("O"):
            if not isinstance(value, (str, bytes)):
                raise TileDBError(f"Cannot cast `{value}` to string.")
            return _quoted(value)
        if isinstance(value, (str, bytes)):
            raise TileDBError(f"Cannot cast `{value}` to {dtype.name}.")
        if dtype.kind in "mM":
            dtype = np.dtype(np.int64)
        elif dtype.kind == "b":
            dtype = np.dtype(np.uint8)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not np.isfinite(value) or not info.min <= int(value) <= info.max:
                raise TileDBError(f"Cannot cast `{value}` to {dtype.name}.")
            return str(int(value))
        return repr(float(dtype.type(value)))

    def _value_dtype(self, name):
        schema = self.schema
        if schema.has_attr(name):
            return np.dtype(schema.attr(name).dtype)
        return np.dtype(schema.domain.dim(name).dtype)

    def _labels(self, name):
        """The labels of ``name``'s enumeration, or None."""
        schema = self.schema
        if schema is None or not schema.has_attr(name) or schema.attr(name).enum_label is None:
            return None
        return list(schema.enum(schema.attr(name).enum_label).values())

    @staticmethod
    def _label_value(labels, value):
        """``value`` as the labels' type, for comparing with them."""
        if labels and isinstance(labels[0], str) and isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        if labels and isinstance(labels[0], str) != isinstance(value, str):
            raise TileDBError(f"Cannot compare `{value}` with the enumeration's labels")
        return value


def _is_variable(node):
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise TileDBError(f"Unrecognized expression {node.func}.")
        if node.func.id not in ("attr", "dim", "val"):
            raise TileDBError("Valid casts are attr(), dim(), or val()).")
        if len(node.args) != 1:
            raise TileDBError(f"Exactly one argument must be provided to {node.func.id}().")
        return node.func.id != "val" and isinstance(node.args[0], ast.Constant)
    return isinstance(node, ast.Name)


def _call_argument(node):
    return node.args[0].value


def _value(node):
    """A value node's Python value: a constant, signed or cast with val()."""
    if isinstance(node, ast.Call):
        _is_variable(node)
        if node.func.id != "val":
            raise TileDBError(f"Incorrect type for cast value: {node.func.id}")
        node = node.args[0]
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        if isinstance(node.op, ast.USub):
            sign = -sign
        node = node.operand
    if not isinstance(node, ast.Constant):
        raise TileDBError(
            f"Incorrect type for comparison value: {ast.dump(node)}: right-hand sides must be constant"
            " expressions, not variables -- did you mean to quote the right-hand side as a string?")
    value = node.value
    if sign == -1:
        if isinstance(value, (str, bytes)) or value is None:
            raise TileDBError(f"Unexpected sign before {ast.dump(node)}.")
        value = -value
    return value


def _field(name):
    if "`" in name:
        raise TileDBError(f"field {name!r}: names holding a backtick cannot be used in conditions")
    return f"`{name}`"


def _quoted(value):
    """A string literal in tessera's grammar: between quotes it does not hold."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise TileDBError(f"condition value {value!r} is not UTF-8 text") from None
    for quote in ("'", '"'):
        if quote not in value:
            return f"{quote}{value}{quote}"
    raise TileDBError(f"condition value {value!r} holds both quote characters")
