"""Benchmark: where the test command's CPU goes, every process of it counted.

Runs a command (by default the README's pytest, `-n 2 --dist loadfile`) under the kernel's
process accounting, which writes one record for every process that ends: its CPU, its parent,
whether it was forked without exec, and its name. A name alone does not tell one `python` from
another, so while the command runs a `.pth` file in this interpreter's site-packages has every
Python process that starts write its command line, keyed by pid and start time, to a folder of
the run's own; a forked child (a fork server's task, a forked rank) is counted under what its
parent ran. Both are removed when the command ends, and accounting is turned off again.

Needs root and `accton` (Debian's `acct` package). A Python process counts by the command line
it wrote, whatever a thread of it renamed it to. One that wrote none has a row of its own, with
what forks from it: an interpreter started with `-S` skips the `.pth` files, and the shim every
process the service starts runs under is `python -I -S`. `SUITE_CPU_KEEP=1` keeps the records
(the folder `vtp-suite-cpu-*` in the temporary directory). Prints one JSON line on stdout:

    wall_s         the command, start to exit
    returncode     its exit status
    cpu_s          user + system CPU of every process recorded
    processes      records
    categories     {name: {"processes": N, "cpu_s": S}}, the largest first

    sudo python bench/suite_cpu.py [-- COMMAND ...]
"""

import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT = [sys.executable, "-m", "pytest", "-q", "-rs", "-n", "2", "--dist", "loadfile"]
RECORD = struct.Struct("=BBHIIIIIIf8H16s")
"""The kernel's `struct acct_v3`: flag, version, tty, exit code, uid, gid, pid, ppid, start
(seconds), elapsed, then utime, stime and six more `comp_t` counters, then the name."""
FORKED = 0x01
TICKS = os.sysconf("SC_CLK_TCK")
CATEGORIES = (
    (r"exec\(eval\(sys\.stdin|execnet", "pytest-xdist workers (tests run in process)"),
    (r"-m pytest", "pytest (the command itself, and suites the tests run)"),
    (r"vtp\.trainer|-m trainer\b", "python -m vtp.trainer (nodes and their ranks)"),
    (r"-m vtp local serve|vtp\.testing\.serve", "vtp local serve"),
    (r"-m vtp local exec", "vtp local exec, with the program it runs"),
    (r"endpoints\.\w+_server", "serving processes (TF Serving, TorchServe, prebuilt)"),
    (r"warm_server", "warm replica servers"),
    (r"-m vtp (run|submit|schedule)\b", "vtp run / submit / schedule"),
    (r"--standby", "pipeline standby workers"),
    (r"vtp\.engine\.(worker|fork_server)", "pipeline workers and fork servers"),
    (r"\bpip\b", "pip"),
    (r"-m vtp\b", "other vtp commands"),
)
UNLABELLED = "Python with no command line written (-S: the replicas' shims), and its forks"
NAMES = {"python3": "python3 (gcloud's own Python, and replicas in containers)"}


@dataclass(frozen=True)
class Record:
    """One ended process."""

    pid: int
    ppid: int
    start: int
    elapsed: float
    cpu: float
    forked: bool
    name: str


def comp_t(value: int) -> int:
    """A `comp_t`: 13 bits of mantissa, 3 of base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def read_records(path: Path) -> list[Record]:
    """Every record of an accounting file."""
    data = path.read_bytes()
    records = []
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        cpu = (comp_t(fields[10]) + comp_t(fields[11])) / TICKS
        name = fields[18].split(b"\0", 1)[0].decode(errors="replace")
        forked = bool(fields[0] & FORKED)
        records.append(
            Record(fields[6], fields[7], fields[8], fields[9] / TICKS, cpu, forked, name)
        )
    return records


def read_commands(folder: Path) -> dict[int, list[tuple[float, str]]]:
    """pid -> [(start, command line)] as the Python processes wrote them."""
    commands: dict[int, list[tuple[float, str]]] = collections.defaultdict(list)
    for entry in folder.iterdir():
        pid, started = entry.name.split("-", 1)
        commands[int(pid)].append((float(started), entry.read_text(errors="replace")))
    return commands


def command_of(record: Record, commands: dict[int, list[tuple[float, str]]]) -> str | None:
    """The command line the process wrote when it started: the first written under its pid
    while it ran (pids are reused)."""
    end = record.start + record.elapsed + 1
    during = [
        (at, line) for at, line in commands.get(record.pid, []) if record.start - 1 <= at <= end
    ]
    return min(during)[1] if during else None


def category(command: str) -> str:
    """The row a command line counts under."""
    for pattern, name in CATEGORIES:
        if re.search(pattern, command):
            return name
    return "other Python programs (users' scripts, samples, tools)"


def tally(records: list[Record], commands: dict[int, list[tuple[float, str]]]) -> dict:
    """CPU and count per category; a forked child under its parent's command."""
    by_pid: dict[int, list[Record]] = collections.defaultdict(list)
    for record in records:
        by_pid[record.pid].append(record)

    def label(record: Record, depth: int = 0) -> str:
        if not record.forked:
            command = command_of(record, commands)
            if command is not None:
                return category(command)
            if record.name == "python":
                return UNLABELLED
            return NAMES.get(record.name, record.name)
        parents = [p for p in by_pid.get(record.ppid, []) if p.start <= record.start + 1]
        if parents and depth < 8:
            return label(max(parents, key=lambda p: p.start), depth + 1)
        return UNLABELLED if record.name == "python" else record.name

    count: collections.Counter[str] = collections.Counter()
    cpu: dict[str, float] = collections.defaultdict(float)
    for record in records:
        row = label(record)
        count[row] += 1
        cpu[row] += record.cpu
    return {row: {"processes": count[row], "cpu_s": round(seconds, 1)}
            for row, seconds in sorted(cpu.items(), key=lambda item: -item[1])}  # fmt: skip


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :] if "--" in argv else DEFAULT
    accton = shutil.which("accton")
    if os.geteuid() != 0 or accton is None:
        print("suite_cpu: needs root and accton (apt-get install acct)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="vtp-suite-cpu-"))
    logs = work / "commands"
    logs.mkdir()
    logs.chmod(0o1777)  # processes of other users write here too
    accounting = work / "pacct"
    accounting.touch()
    hook = Path(sysconfig.get_paths()["purelib"]) / "zz_vtp_suite_cpu.pth"
    # One line, as a .pth runs it; a process that cannot write there (another user's, a
    # sandboxed one) starts as it would have, with nothing on its stderr.
    write = (
        f"open(os.path.join({str(logs)!r}, '%d-%.3f' % (os.getpid(), time.time())), 'w')"
        ".write(' '.join(sys.orig_argv)[:400])"
    )
    guarded = "try: " + write + "\nexcept OSError: pass"
    began = time.monotonic()
    try:
        hook.write_text(f"import os, sys, time; exec({guarded!r})\n")
        subprocess.run([accton, str(accounting)], check=True, capture_output=True)
        began = time.monotonic()
        returncode = subprocess.run(command, cwd=REPO, stdout=sys.stderr).returncode
    finally:
        wall = time.monotonic() - began
        subprocess.run([accton, "off"], capture_output=True)
        hook.unlink(missing_ok=True)
    records = read_records(accounting)
    categories = tally(records, read_commands(logs))
    if not os.environ.get("SUITE_CPU_KEEP"):
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({
        "wall_s": round(wall, 1), "returncode": returncode,
        "cpu_s": round(sum(r.cpu for r in records), 1), "processes": len(records),
        "categories": categories,
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
