"""The SQL questions of the bench (sql.py against TileDB-Py and DuckDB,
ab.py between two builds of tessera), and how answers are compared."""

# (array, question, SQL, TileDB-Py code setting `answer` to rows of numbers).
CASES = [
    (
        "sparse_2d",
        "grouped: count, avg(v) by k",
        "SELECT k, count(*) AS n, avg(v) AS mean FROM a GROUP BY k ORDER BY k",
        "df = A.query(attrs=['k', 'v'], dims=False).df[:]\n"
        "g = df.groupby('k')['v'].agg(['count', 'mean']).sort_index()\n"
        "answer = [[int(k), int(n), float(m)] for k, n, m in zip(g.index, g['count'], g['mean'])]",
    ),
    (
        "sparse_2d",
        "filtered count: v > 1",
        "SELECT count(*) AS n FROM a WHERE v > 1",
        "r = A.query(cond='v > 1.0', attrs=['v']).agg('count')[:]\n"
        "answer = [[int(r['v']['count'])]]",
    ),
    (
        "sparse_2d",
        "grouped: count, avg(v) by x % 100",
        "SELECT x % 100 AS b, count(*) AS n, avg(v) AS mean FROM a GROUP BY b ORDER BY b",
        "df = A.query(attrs=['v'], dims=['x']).df[:]\n"
        "g = df.groupby(df['x'] % 100)['v'].agg(['count', 'mean']).sort_index()\n"
        "answer = [[int(b), int(n), float(m)] for b, n, m in zip(g.index, g['count'], g['mean'])]",
    ),
    (
        "sparse_2d",
        "sum(k) over a 1 % box",
        "SELECT sum(k) AS s FROM a WHERE x < 109951162777 AND y < 109951162777",
        "df = A.query(attrs=['k'], dims=False).df[0:109951162776, 0:109951162776]\n"
        "answer = [[int(df['k'].sum())]]",
    ),
    (
        "dense_f64_zstd",
        "grouped: count, avg(a) by floor(a / 100)",
        "SELECT floor(a / 100) AS b, count(*) AS n, avg(a) AS mean FROM a GROUP BY b ORDER BY b",
        "import numpy as np\n"
        "df = A.query(attrs=['a'], dims=False).df[:]\n"
        "g = df.groupby(np.floor(df['a'] / 100))['a'].agg(['count', 'mean']).sort_index()\n"
        "answer = [[float(b), int(n), float(m)] for b, n, m in zip(g.index, g['count'], g['mean'])]",
    ),
    (
        "dense_f64_zstd",
        "filtered count: a > 500",
        "SELECT count(*) AS n FROM a WHERE a > 500",
        "df = A.query(attrs=['a'], dims=False).df[:]\n"
        "answer = [[int((df['a'] > 500).sum())]]",
    ),
]


def same(a, b):
    """Whether two answers (rows of numbers) agree, floats to 1e-9."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if abs(float(x) - float(y)) > 1e-9 * max(1.0, abs(float(x))):
                return False
    return True
