"""Which file a worker lints next: neighbouring files on one worker on a first run, the slowest
first once their times are known, and no worker idle while files are left."""

from __future__ import annotations

from etrace_lint.discovery.discover import TargetSpec
from etrace_lint.running.schedule import Schedule


def _specs(*files: tuple[str, int]) -> list[TargetSpec]:
    return [TargetSpec(f"/repo/{name}.py", f"target_{i}") for name, n in files for i in range(n)]


def _files(specs, group) -> set[str]:
    return {specs[i].path.rsplit("/", 1)[1][:-3] for i in group}


def _drain(schedule: Schedule, specs, order: list[str]) -> dict[str, list[str]]:
    """Hand out every file, the workers asking in turn as given by ``order``."""
    taken: dict[str, list[str]] = {worker: [] for worker in order}
    while True:
        for worker in order:
            group = schedule.next_group(worker)
            if group is None:
                return taken
            (name,) = _files(specs, group)
            taken[worker].append(name)


def test_a_first_run_gives_each_worker_its_own_stretch_of_neighbouring_files():
    specs = _specs(*[(name, 1) for name in "abcdefgh"])
    taken = _drain(Schedule(specs, 2), specs, ["w1", "w2"])
    assert taken == {"w1": list("abcd"), "w2": list("efgh")}


def test_a_worker_done_with_its_stretch_takes_from_the_far_end_of_the_longest_left():
    specs = _specs(*[(name, 1) for name in "abcdefgh"])
    schedule = Schedule(specs, 2)
    got = [schedule.next_group("slow"), schedule.next_group("fast")]
    for _ in range(3):
        got.append(schedule.next_group("fast"))  # f, g, h: its own stretch
    got.append(schedule.next_group("fast"))  # its stretch is done: the slow worker's last file
    assert [_files(specs, g).pop() for g in got] == list("aefghd")
    assert [_files(specs, schedule.next_group("slow")).pop() for _ in range(2)] == ["b", "c"]
    assert schedule.next_group("slow") is None and len(schedule) == 0


def test_a_file_is_one_group_and_every_target_is_handed_out_once():
    specs = _specs(("a", 3), ("b", 1), ("c", 2))
    schedule = Schedule(specs, 3)
    groups = [schedule.next_group(w) for w in ("x", "y", "z")]
    assert [len(g) for g in groups] == [3, 1, 2]
    assert sorted(i for g in groups for i in g) == list(range(len(specs)))
    assert schedule.next_group("x") is None


def test_recorded_times_put_the_slowest_files_first_whoever_asks():
    specs = _specs(("a", 1), ("b", 1), ("c", 1), ("d", 1))
    durations = {specs[0].key: 1.0, specs[1].key: 9.0, specs[2].key: 3.0}  # d unknown: a typical file
    taken = _drain(Schedule(specs, 2, durations), specs, ["w1", "w2"])
    assert taken == {"w1": ["b", "c"], "w2": ["d", "a"]}


def test_the_rest_of_a_dead_workers_file_goes_first_and_its_stretch_to_the_next_worker():
    specs = _specs(("a", 2), ("b", 1), ("c", 1), ("d", 1))
    schedule = Schedule(specs, 2)
    first = schedule.next_group("dead")
    assert _files(specs, first) == {"a"}
    schedule.put_back(first[1:])
    assert schedule.next_group("new", alive={"new"}) == first[1:]
    assert _files(specs, schedule.next_group("new", alive={"new"})) == {"b"}  # the dead worker's stretch
