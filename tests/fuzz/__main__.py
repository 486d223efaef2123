"""``python -m tests.fuzz``: campaigns of generated models, linted and judged against braintrace.

    python -m tests.fuzz run -n 200 -j 2 --seed 7 --out t.json [--shard 1/4] [--keep DIR] [--resume]
    python -m tests.fuzz merge t1.json t2.json ... --out t.json
    python -m tests.fuzz summary t.json
    python -m tests.fuzz shrink t.json --out tests/fixtures/fuzz [--budget 30] [-j 2]
    python -m tests.fuzz recheck tests/fixtures/fuzz
    python -m tests.fuzz serve oracle|oracle-verify|lint|lint-verify
                                                (a worker: a path per line in, a JSON line out)

Run from the repository's root.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from typing import IO


def _open(path: str, mode: str) -> IO[str]:
    """A table's file as text; one whose name ends in ``.gz`` is gzip-compressed (a campaign's tables kept
    beside the figures they give are a tenth of their size so)."""
    if path.endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def _write(table: dict, out: str) -> None:
    part = out[:-3] + ".tmp.gz" if out.endswith(".gz") else out + ".tmp"
    with _open(part, "w") as handle:
        json.dump(table, handle, indent=1, sort_keys=True)
    os.replace(part, out)


def _read(path: str) -> dict:
    with _open(path, "r") as handle:
        return dict(json.load(handle))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="a campaign (or one shard of it): its table")
    run.add_argument("-n", type=int, default=50, help="models in the whole campaign")
    run.add_argument("-j", type=int, default=1, help="jobs: pairs of worker processes")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--shard", default="1/1", help="i/n: this machine's part of the campaign")
    run.add_argument("--out", required=True)
    run.add_argument("--keep", help="write the generated models to this folder (default: a temporary one)")
    run.add_argument("--verify", action="store_true",
                     help="judge the verdicts of a --verify run of each model instead of the default run's")
    run.add_argument("--resume", action="store_true",
                     help="where --out holds this shard's table stopped early, judge only the models it lacks")
    merge = commands.add_parser("merge", help="one table from the shards of one campaign")
    merge.add_argument("tables", nargs="+")
    merge.add_argument("--out", required=True)
    show = commands.add_parser("summary", help="a table's counts and disagreements")
    show.add_argument("table")
    show.add_argument("--markdown", action="store_true", help="as the docs page's tables")
    shrink = commands.add_parser("shrink", help="each mechanism's smallest disagreeing model, as a fixture")
    shrink.add_argument("table")
    shrink.add_argument("--out", required=True, help="the folder the fixtures are written to")
    shrink.add_argument("--budget", type=int, default=30, help="models tried per mechanism")
    shrink.add_argument("--only", default="", help="only mechanisms whose name contains this")
    shrink.add_argument("-j", type=int, default=1, help="mechanisms shrunk at a time")
    recheck = commands.add_parser("recheck", help="which line each fixture's disagreement shows on")
    recheck.add_argument("folder")
    worker = commands.add_parser("serve", help="a worker process")
    worker.add_argument("kind", choices=("oracle", "oracle-verify", "lint", "lint-verify"))
    args = parser.parse_args(argv)

    from . import campaign

    if args.command == "serve":
        campaign.serve(args.kind)
        return 0
    if args.command == "run":
        shard = campaign.Shard.parse(args.shard)
        previous = _read(args.out) if args.resume and os.path.exists(args.out) else None
        why = previous and campaign.resumable(previous, args.n, args.seed, shard, args.verify)
        if why:
            print(f"run: {args.out} is not a table of this shard of this campaign on this line ({why}); "
                  f"give another --out", file=sys.stderr)
            return 2
        table = campaign.run(args.n, args.seed, args.j, shard, args.keep,
                             progress=lambda line: print(line, flush=True),
                             partial=lambda table: _write(table, args.out), resume=previous, verify=args.verify)
        _write(table, args.out)
    elif args.command == "merge":
        try:
            table = campaign.merge([_read(path) for path in args.tables])
        except ValueError as exc:
            print(f"merge: {exc}", file=sys.stderr)
            return 2
        _write(table, args.out)
    elif args.command == "shrink":
        from .shrink import shrink_table

        shrink_table(_read(args.table), args.out, args.budget, args.only, args.j,
                     progress=lambda line: print(line, flush=True))
        return 0
    elif args.command == "recheck":
        from .shrink import recheck as recheck_folder

        recheck_folder(args.folder, progress=lambda line: print(line, flush=True))
        return 0
    else:
        table = _read(args.table)
        if args.markdown:
            print(campaign.markdown(campaign.summary(table)))
            return 0
    print(json.dumps(campaign.summary(table), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
