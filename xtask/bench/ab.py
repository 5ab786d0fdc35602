"""tessera against itself: the local bench's cases read by two builds of
`tessera read`, `before` and `after`, and the SQL bench's questions asked
of both builds' `tessera sql`, alternating in the same rounds (the order
flipped every round), whole processes. Writes a Markdown table to
RESULTS: best / median seconds of each, the ratio of medians (after /
before) and peak RSS. Both builds must return the same cells and the
same answers.

    ab.py BENCH_DIR BEFORE_BIN AFTER_BIN ROUNDS RESULTS BEFORE_NAME AFTER_NAME
"""
import json
import os
import sys

import common
from sql_cases import CASES as SQL_CASES, same


def main():
    bench, before, after, rounds, results, before_name, after_name = sys.argv[1:8]
    rounds = int(rounds)
    common.configure(after, bench)
    rows = []
    timed = []
    for name, case, attrs, sub, cond in common.cases():
        arr = os.path.join(bench, name)
        cmd = common.tessera_cmd(arr, attrs, sub, cond)
        # Same cells from both: `--format null` prints nothing, so count
        # (`aggregate` takes the selection, not the fields).
        counts = {}
        selection = common.tessera_cmd(arr, None, sub, cond)[5:]
        for label, binary in (("before", before), ("after", after)):
            counts[label] = common.run([binary, "aggregate", arr, "count"] + selection)[2]
        if counts["before"] != counts["after"]:
            raise SystemExit(f"{name} / {case}: the builds count different cells: {counts}")
        timed.append((name, case, cmd[1:]))
    for name, question, query, _ in SQL_CASES:
        args = ["sql", "--format", "jsonl", "--table", f"a={os.path.join(bench, name)}", query]
        answers = {}
        for label, binary in (("before", before), ("after", after)):
            out = common.run([binary] + args)[2]
            answers[label] = [list(json.loads(line).values()) for line in out.splitlines()]
        if not same(answers["before"], answers["after"]):
            raise SystemExit(f"{name} / {question}: the builds answer differently")
        timed.append((name, f"SQL {question}", args))
    for name, case, args in timed:
        times = {"before": [], "after": []}
        rss = {"before": 0.0, "after": 0.0}
        for r in range(rounds):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for label in order:
                binary = before if label == "before" else after
                dt, peak, _ = common.run([binary] + args)
                times[label].append(dt)
                rss[label] = max(rss[label], peak)
        (b_best, b_med), (a_best, a_med) = common.stats(times["before"]), common.stats(times["after"])
        rows.append(
            f"| {name} | {case} | {b_best:.4f} / {b_med:.4f} | {a_best:.4f} / {a_med:.4f} "
            f"| {a_med / b_med:.2f} | {rss['before']:.0f} / {rss['after']:.0f} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    with open(results, "w") as f:
        f.write(
            f"`tessera read --format null` and `tessera sql` (the SQL bench's questions), "
            f"{before_name} (before) against {after_name} (after), "
            f"alternating, {rounds} rounds; best / median seconds of the whole process.\n\n"
            "| array | case | before s | after s | after / before (medians) | RSS before / after MiB |\n"
            "|---|---|---|---|---:|---|\n" + "\n".join(rows) + "\n"
        )


if __name__ == "__main__":
    main()
