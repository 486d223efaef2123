"""--shard K/N splits a run across CI runners; `etrace-lint merge` gives back the log of one run."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from helpers import FIXTURES, run_cli
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from etrace_lint.discovery.discover import TargetSpec
from etrace_lint.running.shards import ShardError, parse_shard, split

_TIMES = re.compile(r'"(startTimeUtc|endTimeUtc)": "[^"]*"')


@pytest.fixture(scope="module")
def tree(small_tree):
    """The session's small tree of fixture models (conftest.py): its unsharded run, ``cold.sarif`` and
    ``cold.json``, filled the cache the shards below are balanced by."""
    return small_tree


def _read(path) -> str:
    return _TIMES.sub(r'"\1": ""', path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def shards(tree):
    """Three shards, balanced by the times the cache recorded in the unsharded run."""
    codes = []
    for k in (1, 2, 3):
        proc = run_cli("models", "--shard", f"{k}/3", "--sarif", f"s{k}.sarif", "-o", f"s{k}.json",
                       "--output-format", "json", "-q", cwd=str(tree))
        codes.append(proc.returncode)
    return codes


def test_merged_sarif_equals_the_unsharded_log(tree, shards):
    proc = run_cli("merge", "s3.sarif", "s1.sarif", "s2.sarif", "-o", "merged.sarif", cwd=str(tree))
    assert proc.returncode == 2, proc.stderr  # the unsharded run's exit code: a target could not be linted
    assert _read(tree / "merged.sarif") == _read(tree / "cold.sarif")


def test_merged_json_equals_the_unsharded_output(tree, shards):
    proc = run_cli("merge", "s1.json", "s2.json", "s3.json", cwd=str(tree))
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == (tree / "cold.json").read_text(encoding="utf-8")


def test_every_target_is_in_exactly_one_shard(tree, shards):
    linted = []
    for k in (1, 2, 3):
        record = json.loads((tree / f"s{k}.json").read_text())["etraceLintShard"]
        assert (record["index"], record["count"]) == (k, 3)
        linted += record["targets"]
    listed = json.loads(run_cli("models", "--list-targets", "--output-format", "json", cwd=str(tree)).stdout)
    assert sorted(linted) == sorted(f"{t['path']}::{t['factory']}" for t in listed["targets"])
    assert len(set(linted)) == len(linted)


def test_merge_refuses_a_missing_or_repeated_shard(tree, shards):
    missing = run_cli("merge", "s1.sarif", "s2.sarif", cwd=str(tree))
    assert missing.returncode == 2 and "missing shard 3/3" in missing.stderr
    twice = run_cli("merge", "s1.sarif", "s1.sarif", "s2.sarif", cwd=str(tree))
    assert twice.returncode == 2 and "both shard 1/3" in twice.stderr
    unsharded = run_cli("merge", "cold.sarif", cwd=str(tree))
    assert unsharded.returncode == 2 and "not the output of a --shard run" in unsharded.stderr


def test_merge_refuses_shards_of_another_configuration_tree_or_version(tree, shards, tmp_path):
    """Each refusal exits 2 and names the first thing that differs."""
    selected = run_cli("models", "--shard", "2/3", "--select", "ETL2", "--sarif", "s2-select.sarif", "-q",
                       cwd=str(tree))
    assert selected.returncode in (0, 1, 2), selected.stderr
    proc = run_cli("merge", "s1.sarif", "s2-select.sarif", "s3.sarif", cwd=str(tree))
    assert proc.returncode == 2 and "different configurations: configuration.select" in proc.stderr, proc.stderr

    other = tmp_path / "other"
    shutil.copytree(tree / "models", other / "models")
    shutil.copy(os.path.join(FIXTURES, "clean", "lstm.py"), other / "models" / "zz_added.py")
    added = run_cli("models", "--shard", "3/3", "--sarif", "s3-other.sarif", "-q", "--no-cache", cwd=str(other))
    assert added.returncode in (0, 1, 2), added.stderr
    shutil.copy(other / "s3-other.sarif", tree / "s3-other.sarif")
    proc = run_cli("merge", "s1.sarif", "s2.sarif", "s3-other.sarif", cwd=str(tree))
    assert proc.returncode == 2 and "discovered different targets" in proc.stderr, proc.stderr

    # a shard from another release of etrace-lint (its record says so)
    log = json.loads((tree / "s2.sarif").read_text(encoding="utf-8"))
    log["runs"][0]["properties"]["etraceLintShard"]["etraceLint"] = "0.0.9 (0123456789abcdef)"
    (tree / "s2-old.sarif").write_text(json.dumps(log), encoding="utf-8")
    proc = run_cli("merge", "s1.sarif", "s2-old.sarif", "s3.sarif", cwd=str(tree))
    assert proc.returncode == 2 and "different versions of etrace-lint: etraceLint:" in proc.stderr, proc.stderr
    assert "0.0.9" in proc.stderr


def test_merge_tells_a_runner_on_another_commit_by_the_digests_of_its_files(tree, tmp_path):
    """Runners on one commit merge wherever they checked the tree out; a runner on another commit discovers
    the same targets in a file that differs, and merge refuses it, naming the file. Every shard here runs
    without a cache (each split by its number of targets) and without the probe, which merge does not read."""
    same, other = tmp_path / "same-commit", tmp_path / "other-commit"
    shutil.copytree(tree / "models", same / "models")
    shutil.copytree(tree / "models", other / "models")
    files = sorted(name for name in os.listdir(tree / "models") if name.endswith(".py"))
    with open(other / "models" / files[0], "a", encoding="utf-8") as handle:
        handle.write("\n# edited on another commit: the same targets, another file\n")
    for where, k, name in ((tree, 1, "first"), (same, 2, "same"), (other, 2, "other")):
        proc = run_cli("models", "--shard", f"{k}/2", "--sarif", str(tmp_path / f"{name}.sarif"),
                       "-o", str(tmp_path / f"{name}.json"), "--output-format", "json", "-q", "--no-cache",
                       "--no-probe", cwd=str(where))
        assert proc.returncode in (0, 1, 2), proc.stderr
    for suffix in ("sarif", "json"):
        merged = run_cli("merge", f"first.{suffix}", f"same.{suffix}", cwd=str(tmp_path))
        # exit 2 as the unsharded run: bad_broken_factories.py's targets cannot be linted
        assert merged.returncode == 2 and "merge: error" not in merged.stderr, merged.stderr
        shards = [json.loads((tmp_path / f"{name}.{suffix}").read_text()) for name in ("first", "same")]
        if suffix == "sarif":
            assert len(json.loads(merged.stdout)["runs"][0]["results"]) == sum(
                len(log["runs"][0]["results"]) for log in shards)
        else:
            assert len(json.loads(merged.stdout)["findings"]) == sum(len(log["findings"]) for log in shards)
        refused = run_cli("merge", f"first.{suffix}", f"other.{suffix}", cwd=str(tmp_path))
        assert refused.returncode == 2 and not refused.stdout, refused.stderr
        assert f"were made from different copies of models/{files[0]}" in refused.stderr, refused.stderr
    # every shard records every file that holds a target, not only its own
    record = json.loads((tmp_path / "first.json").read_text())["etraceLintShard"]
    assert sorted(record["files"]) == [f"models/{name}" for name in files]


def test_a_bad_shard_value_is_a_usage_error(tree):
    proc = run_cli("models", "--shard", "4/3", cwd=str(tree))
    assert proc.returncode == 2 and "--shard 4/3" in proc.stderr
    with pytest.raises(ShardError):
        parse_shard("1-3")


_files = st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(1, 3)), min_size=1, max_size=12,
                  unique_by=lambda t: t[0])


@hypothesis_settings(max_examples=60, deadline=None)
@given(files=_files, count=st.integers(1, 5), timed=st.booleans())
def test_split_is_a_stable_partition_that_keeps_files_whole(files, count, timed):
    specs = [TargetSpec(f"/repo/{name}.py", f"etrace_target_{i}") for name, n in files for i in range(n)]
    seconds = {spec.key: 0.5 + (hash(spec.key) % 7) for spec in specs} if timed else None
    parts = split(specs, "/repo", count, seconds)
    assert len(parts) == count
    assert sorted(s.key for part in parts for s in part) == sorted(s.key for s in specs)
    owner = {spec.path: k for k, part in enumerate(parts) for spec in part}
    assert all(owner[spec.path] == k for k, part in enumerate(parts) for spec in part), "a file in two shards"
    assert split(list(reversed(specs)), "/repo", count, seconds) == [list(reversed(p)) for p in parts], \
        "the split depends on the order the targets were found in"
    order = sorted({spec.path for spec in specs})
    shard_of_files = [owner[path] for path in order]
    assert shard_of_files == sorted(shard_of_files), "a shard is not one stretch of neighbouring files"
    if not timed:
        sizes = [len(part) for part in parts]
        assert max(sizes) <= len(specs) / count + 3, "the largest shard is larger than an even split allows"
