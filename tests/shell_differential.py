"""Real bash as the judge of the shell splitter, for `test_permissions_shell_differential.py`.

The splitter (`moot.permissions.shell`) reads a command line and says which programs it would
run; bash decides by running it. Where they disagree, a prefix rule such as `Bash(echo:*)` lets
through a program nobody allowed. So a line the rules allow is run under real bash, and every
program it starts is written down:

- `PATH` holds only shims: one script, linked under each program name, that logs its name and
  arguments and then stands in for the program (`echo` prints, `cat` and `ls` run the real ones
  so that `$(cat victim)` has content, `git` runs real git so that what git itself starts is
  seen too);
- every builtin is disabled (`enable -n`, from `BASH_ENV`, so that the line is still run
  exactly as `bash -c <line>`, as the sandboxes run it), so `echo` goes through `PATH` too;
- `command_not_found_handle` logs a name found nowhere.

No strace: it is not installed in CI, and these three see every program a line names without a
path. A program named with a path (`/bin/rm`, `./rm`) is seen when it is `planted`: its real
file is the shim inside bubblewrap, and so is a program of that name in the workspace. A shell
or a filter that runs what it reads (`sh`, `sed`, `awk`, `xargs`) can be made `real`, and the
builtins that run commands (`.`, `eval`, `exec`) can be kept enabled, so that what they run is
seen too. `Bash.run_with_changes` also says which workspace files a line changed.
bubblewrap keeps the host safe from a line that does get through: root read-only, only the
run's directory writable, no network.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

from moot.sandbox.bwrap_probe import bwrap_unavailable, find_bwrap

ALLOWED = ("echo", "ls", "cat", "git status", "npm run test")
"""What the rules allow: `Bash(echo:*)` and so on."""
RULES = [f"Bash({prefix}:*)" for prefix in ALLOWED]

SHIMMED = ("echo", "ls", "cat", "git", "npm", "rm", "curl", "touch", "python3", "sh", "bash")
"""Every other name reaches `command_not_found_handle`. The shims are for what allowed lines
run (it must succeed, as it would) and for names programs other than bash look up (git runs its
fsmonitor through sh)."""
_REAL = ("cat", "ls", "git")
"""Shims that run the real program after logging."""
TIMEOUT = 2.0
"""Seconds a line may run; generated lines end at once, but a mutated one could loop."""

_SHIM = """#!/bin/bash -p
# Log how this program was run, then stand in for it (-p: no BASH_ENV, no imported functions).
name=${{0##*/}}
if [[ $name == .unknown ]]; then name=$1; shift; fi
record=$name
for arg in "$@"; do record+=$'\\x1f'$arg; done
printf '%s\\x1e' "$record" >> {log}
case $name in
  .unknown) exit 127 ;;
  echo) printf '%s\\n' "$*" ;;
{real}
esac
exit 0
"""
_PRELUDE = """# Read by bash (BASH_ENV) before the line: what runs goes through PATH and is logged.
command_not_found_handle() {{ {unknown} "$@"; }}
for b in $(compgen -b); do case $b in enable|{keep}) ;; *) enable -n "$b" ;; esac; done
enable -n enable
"""
RUNS_COMMANDS = (
    *(".", "source", "eval", "exec", "command", "builtin", "trap", "alias", "hash", "shopt"),
    *("export", "declare", "typeset"),
)
"""Builtins that run other commands, or change what runs: kept enabled where what they run
must be seen."""
PLANTED_GIT_CONFIG = "[core]\n\tfsmonitor = rm planted\n"
"""`./git/config`: what `XDG_CONFIG_HOME=. git status` reads, and git runs its fsmonitor."""


def unavailable() -> str | None:
    """Why lines cannot be run here (bubblewrap or git missing), or None when they can."""
    reason = bwrap_unavailable()
    if reason is not None:
        return f"bubblewrap: {reason}"
    if shutil.which("git") is None:
        return "git is not installed (real git runs behind the `git` shim)"
    return None


def allowed(argv: tuple[str, ...]) -> bool:
    """Whether the rules allow running `argv`, checked here without moot's own matcher.

    A `:*` rule is a plain text prefix, by design (`Bash(ls:*)` allows `lsblk` too; see
    `matches_prefix`), so the words are joined as the splitter's `SubCommand.text` joins them.
    """
    return " ".join(argv).startswith(ALLOWED)


class Bash:
    """Runs command lines under real bash in bubblewrap, each in a fresh directory under `root`.

    Every run gets a copy of one workspace: a `victim` file, `sub/kept`, a `link` to victim,
    `.moot/settings.json`, an empty git repository, and a planted `git/config` (see
    `PLANTED_GIT_CONFIG`).

    Args:
        root: Where the workspace and each run's directory are made.
        real: Shims that run the real program after logging (`sh`, `sed`: so what they run
            is seen).
        keep_builtins: Builtins left enabled (`RUNS_COMMANDS`).
        planted: Programs whose real files, and `./name` in the workspace, log and do nothing,
            so that a line naming them with a path is seen.
    """

    def __init__(
        self,
        root: Path,
        *,
        real: tuple[str, ...] = _REAL,
        keep_builtins: tuple[str, ...] = (),
        planted: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self.workspace = root / "workspace"
        (self.workspace / "git").mkdir(parents=True)
        (self.workspace / "sub").mkdir()
        (self.workspace / "victim").write_text("v\n")
        (self.workspace / "sub" / "kept").write_text("k\n")
        (self.workspace / "link").symlink_to("victim")
        (self.workspace / ".moot").mkdir()
        (self.workspace / ".moot" / "settings.json").write_text("{}\n")
        (self.workspace / "git" / "config").write_text(PLANTED_GIT_CONFIG)
        subprocess.run(["git", "init", "-q", "--template=", str(self.workspace)], check=True)
        self._bwrap, self._bash = find_bwrap() or "bwrap", shutil.which("bash") or "/bin/bash"
        self._real = {name: path for name in real if (path := shutil.which(name))}
        self._shimmed = tuple(dict.fromkeys((*SHIMMED, *real)))
        self._keep = "|".join(f"'{name}'" for name in keep_builtins) or "''"
        self._planted = {name: path for name in planted if (path := shutil.which(name))}

    def run(self, command: str) -> list[tuple[str, ...]]:
        """Run `command` as `bash -c command`; returns the argv of every program it ran."""
        return self.run_with_changes(command)[0]

    def run_with_changes(self, command: str) -> tuple[list[tuple[str, ...]], list[str]]:
        """Run `command`; returns what it ran and the workspace files it changed (not `.git`)."""
        run = Path(tempfile.mkdtemp(dir=self.root))
        try:
            return self._run(command, run)
        finally:
            shutil.rmtree(run)

    def _run(self, command: str, run: Path) -> tuple[list[tuple[str, ...]], list[str]]:
        work, shims, log = run / "work", run / "shims", run / "log"
        shutil.copytree(self.workspace, work, symlinks=True)
        self._write_shims(shims, log)
        planted: list[str | Path] = []
        for name, path in self._planted.items():
            shutil.copy(shims / ".unknown", work / name)  # `./rm`: the workspace's own
            planted += ["--ro-bind", shims / ".unknown", os.path.realpath(path)]
        before = _files(work)
        argv = [
            *(self._bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--bind", run, run),
            *("--ro-bind", shims, shims, *planted, "--unshare-net", "--die-with-parent"),
            *("--chdir", work, "--", self._bash, "-c", command),
        ]
        env = {"PATH": str(shims), "HOME": str(work), "BASH_ENV": str(shims / ".prelude")}
        # Every process inherits the pipe's write end: reading to its end waits out background
        # jobs too, which could otherwise log after the log was read.
        reader, writer = os.pipe()
        try:
            proc = subprocess.Popen(
                [str(arg) for arg in argv],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(writer,),
                start_new_session=True,
            )
        finally:
            os.close(writer)
        try:
            _wait_for_eof(reader, TIMEOUT)
        finally:
            os.close(reader)
            _kill_group(proc)
        records = log.read_bytes().decode("utf-8", "surrogateescape").split("\x1e")
        after = _files(work)
        names = before.keys() | after.keys()
        changed = sorted(name for name in names if before.get(name) != after.get(name))
        return [tuple(record.split("\x1f")) for record in records if record], changed

    def _write_shims(self, shims: Path, log: Path) -> None:
        shims.mkdir()
        real = "\n".join(
            f'  {name}) exec {shlex.quote(path)} "$@" ;;' for name, path in self._real.items()
        )
        shim = shims / ".unknown"
        shim.write_text(_SHIM.format(log=shlex.quote(str(log)), real=real))
        shim.chmod(0o755)
        for name in self._shimmed:
            (shims / name).symlink_to(".unknown")
        prelude = _PRELUDE.format(unknown=shlex.quote(str(shim)), keep=self._keep)
        (shims / ".prelude").write_text(prelude)
        log.touch()


def _files(work: Path) -> dict[str, bytes | None]:
    """Every file below `work` but `.git`, with its content (None for a link or a special file)."""
    found: dict[str, bytes | None] = {}
    for path in work.rglob("*"):
        rel = path.relative_to(work)
        if rel.parts[0] == ".git" or (path.is_dir() and not path.is_symlink()):
            continue
        regular = path.is_file() and not path.is_symlink()
        found[rel.as_posix()] = path.read_bytes() if regular else None
    return found


def _wait_for_eof(fd: int, timeout: float) -> None:
    """Read `fd` until every process holding it is gone, or `timeout` passes."""
    while select.select([fd], [], [], timeout)[0]:
        if not os.read(fd, 4096):
            return


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# The generator. A template's upper-case slots are filled in turn: LINE a command line, SIMPLE
# one simple command, WORD an argument, RISKY one of the forms the splitter refuses today, PAY
# a payload (an allowed command, or a forbidden program spelled one of many ways). Payloads sit
# where bash runs them and where it does not.

MAX_DEPTH = 2
HARMLESS = ("echo hi", "ls", "cat victim", "git status", "echo rm", "ls -l", "echo ')'")
FORBIDDEN = ("rm", "curl", "touch", "python3", "sh", "id", "sudo", "xargs", "env", "find")
SPELLINGS: tuple[Callable[[str], str], ...] = (
    lambda name: name,
    lambda name: f"'{name[0]}'{name[1:]}",
    lambda name: "\\" + name,
    lambda name: "$'" + "".join(f"\\x{ord(c):02x}" for c in name) + "'",
    lambda name: f'{name[0]}""{name[1:]}',
    lambda name: f"{name[0]}\\\n{name[1:]}",
    lambda name: f'"{name}"',
    lambda name: f'$"{name}"',
)
FORBIDDEN_ARGS = ("", " -rf victim", " pwned", " -c x")
WORDS = (
    *("x", "'a b'", '"$HOME"', "*", "{a,b}", "$'\\x27'", "a\\\nb", "é", "\u00a0", "\r"),
    *("$(( 1 ))", "${x@Q}", "~root", "$(LINE)", "`PAY`", '"$(PAY)"', "<(PAY)", ">(PAY)"),
    *("${x:-$(PAY)}", "${x/y/$(PAY)}", "'$(PAY)'", '"\\$(PAY)"', "$'\\'' $(PAY)", "#$(PAY)"),
    *("x#$(PAY)", '"${x:-"$(PAY)"}"', '${x#"$(PAY)"}', '$"$(PAY)"', "${x:=$(PAY)}"),
    *("{a,$(PAY)}", "[$(PAY)]", "$( (PAY) )", "$(case x in x) PAY;; esac)", "$(echo ')' ; PAY)"),
    *("$(# )\nPAY)", "RISKY"),
)
RISKY = (
    # bash runs a variable's value as code: see the `x='a[$(PAY)]'` lines below
    *("$((x))", '"$((x))"', "$((x+1))", "$[x]", "${a[x]}", "${a:x}", "${a:0:x}", "${!x}"),
    *("${x@P}", "${PS1@P}", "$((PAY))", "$((\nPAY))", "$((1+$(PAY)))", "$(( $(PAY) ))"),
    # bash joins continued lines first
    *("$\\\n(PAY)", '"$\\\n(PAY)"', "${x\\\n@P}", "$\\\n((x))"),
)
SIMPLE = ("echo WORD", "ls WORD", "cat WORD", "git status WORD", "npm run test WORD", "echo")
PREFIXES = ("", "X=1 ", "X=$(PAY) ", "x='a[$(PAY)]' ", "IFS=x ", "X=`PAY` ", "XDG_CONFIG_HOME=. ")
SUFFIXES = (
    *("", " > out", " 2>&1", " < victim", " <<< $(PAY)", " &>/dev/null", " > >(PAY)"),
    *(" < <(PAY)", " >&2", " <<EOF\n$(PAY)\nEOF", " <<'EOF'\n$(PAY)\nEOF"),
    *(" <<-EOF\n\t`PAY`\n\tEOF", " <<EOF\nx\nEOF\nPAY", ' <<E"O"F\n$(PAY)\nEOF'),
)
LINES = (
    *("SIMPLE", "LINE && LINE", "LINE || LINE", "LINE; LINE", "LINE | LINE", "LINE |& LINE"),
    *("LINE\nLINE", "LINE & LINE", "{ LINE; }", "( LINE )", "! LINE", "time LINE"),
    *("if LINE; then LINE; else LINE; fi", "while ls missing; do LINE; done"),
    *("until echo; do LINE; done", "for i in a $(PAY); do LINE; done", "case x in x) LINE;; esac"),
    *("x='a[$(PAY)]'; LINE", "x='a[$(PAY)]'\nLINE", "for x in 'a[$(PAY)]'; do LINE; done"),
    *("x='a[$(PAY)]'; echo RISKY", "x='$(PAY)'; echo RISKY"),
    *("LINE # ; PAY", "LINE \\\n && LINE", "LINE;\n# x\nLINE", "LINE $'\\n'PAY"),
    *("{ LINE; } > o", "( LINE ) 2>&1 | LINE", "LINE\r\nLINE"),
    *("select x in a; do LINE; done </dev/null", "x=$(cat victim); LINE"),
)
JUNK = (
    *" \t\n;&|()<>'\"`$\\{}[]*?!#=~-:%^@,.0123456789abcrmx\u00a0\u2028é\r\v\f",
    *("\\\n", "$(", "${", "$((", "@P", "<<EOF\n", "\nEOF\n"),
)
_SLOT = re.compile(r"LINE|SIMPLE|WORD|RISKY|PAY")
_PLAIN_WORDS = tuple(word for word in WORDS if not _SLOT.search(word))


def payloads() -> st.SearchStrategy[str]:
    forbidden = st.builds(
        lambda spell, name, args: spell(name) + args,
        st.sampled_from(SPELLINGS),
        st.sampled_from(FORBIDDEN),
        st.sampled_from(FORBIDDEN_ARGS),
    )
    return st.one_of(st.sampled_from(HARMLESS), forbidden)


@st.composite
def _filled(draw: st.DrawFn, templates: tuple[str, ...], depth: int) -> str:
    slots = {
        "LINE": lambda: _filled(LINES if depth < MAX_DEPTH else SIMPLE, depth + 1),
        "SIMPLE": lambda: _simple(depth + 1),
        "WORD": lambda: _filled(WORDS if depth < MAX_DEPTH else _PLAIN_WORDS, depth + 1),
        "RISKY": lambda: _filled(RISKY, depth + 1),
        "PAY": payloads,
    }
    template = draw(st.sampled_from(templates))
    return _SLOT.sub(lambda slot: draw(slots[slot.group()]()), template)


@st.composite
def _simple(draw: st.DrawFn, depth: int) -> str:
    prefix, suffix = draw(_filled(PREFIXES, depth)), draw(_filled(SUFFIXES, depth))
    return prefix + draw(_filled(SIMPLE, depth)) + suffix


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    """A generated command line, sometimes with a few characters of junk put in or over it.

    Two in three set `x` first to a value that runs a payload when bash evaluates it (as an
    arithmetic expression or a prompt string), so that a RISKY form in the line is dangerous.
    """
    text = draw(_filled(("LINE", "x='a[$(PAY)]'; LINE", "x='$(PAY)'; LINE"), 0))
    for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
        at, replace = draw(st.integers(0, len(text))), draw(st.booleans())
        text = text[:at] + draw(st.sampled_from(JUNK)) + text[at + replace :]
    return text


# Lines for the harder harnesses: a denied program fed to what runs it unseen, and the ways a
# line writes a file. PAY is a denied program with its arguments; SRC a command that reads;
# FILE a file, a device or a link.

DENIED = ("rm", "curl", "touch")
"""What the deny rules name in bypass mode: `Bash(rm:*)` and so on."""
DENIAL_RULES = [f"Bash({name}:*)" for name in DENIED]
REAL_FOR_DENIALS = (
    *("cat", "ls", "git", "sh", "bash", "dash", "sed", "awk", "xargs", "env", "nohup"),
    *("timeout", "find", "flock", "setpriv", "unshare", "nice", "stdbuf"),
)
"""Programs that run what they are given: real, so what they run is seen."""
FEEDS = (
    *("echo 'PAY' | sh", "echo 'PAY' | bash", "sh <<< 'PAY'", "bash -s <<< 'PAY'"),
    *("sh < /dev/stdin <<< 'PAY'", ". /dev/stdin <<< 'PAY'", "source /dev/stdin <<< 'PAY'"),
    *(". <(echo 'PAY')", "bash <(echo 'PAY')", "{ sh; } <<< 'PAY'", "echo 'PAY' | (sh)"),
    *("echo 'PAY' | env sh", "echo 'PAY' | timeout 5 sh", "echo 'PAY' | nohup sh"),
    *("exec sh <<< 'PAY'", "x='PAY'; eval \"$x\"", "x='PAY'; sh -c \"$x\"", "sh /dev/fd/0 <<< PAY"),
    *("echo 'PAY' | xargs -I{} sh -c {}", "eval \"$(echo 'PAY')\"", "bash - <<< 'PAY'"),
    *("echo x | xargs -I{} sh -c 'PAY'", "echo 'PAY' | nice sh", "echo 'PAY' | stdbuf -o0 sh"),
    *("/bin/PAY", "/usr/bin/PAY", "./PAY", "command /bin/PAY", "env /usr/bin/PAY"),
    *("sed -n '1e PAY' victim", "echo | sed 's/^/PAY/e'", "sed -f /dev/stdin victim <<< '1e PAY'"),
    *("awk 'BEGIN{system(\"PAY\")}'", 'awk \'BEGIN{print "PAY" | "sh"}\'', "flock victim PAY"),
    *("flock victim -c 'PAY'", "setpriv PAY", "find victim -exec PAY \\;", "sh <<EOF\nPAY\nEOF"),
    *("unshare -r PAY", "echo 'PAY' | unshare -r", "nice /bin/PAY", "timeout 5 ./PAY"),
    *("trap 'PAY' EXIT", "shopt -s expand_aliases\nalias ls='PAY'\nls"),
    *("export XDG_CONFIG_HOME=.; git status # PAY", "declare -x XDG_CONFIG_HOME=. && git status"),
    *("echo 'PAY' | xargs bash -c", "eval PAY", "LESSOPEN='|PAY %s' cat victim"),
)
PLAIN_PAYLOADS = ("rm victim", "curl -o x http://x", "touch made")
WRITE_RULES = [
    f"Bash({prefix}:*)"
    for prefix in (
        *("echo", "cat", "ls", "git log", "git status", "git diff", "sort", "uniq", "tee", "sed"),
        "cp",
    )
]
"""What the rules allow in the write harness: commands that read, and writers."""
REAL_FOR_WRITES = ("cat", "ls", "git", "sort", "uniq", "tee", "sed", "cp")
SOURCES = ("echo hi", "cat victim", "git status", "git log", "ls", "sort victim")
WRITES = (
    *("SRC > FILE", "SRC >> FILE", "SRC 2> FILE", "SRC &> FILE", "SRC >| FILE", "SRC <> FILE"),
    *("SRC >& FILE", "SRC 2>&1 > FILE", "SRC | tee FILE", "SRC | tee -a FILE"),
    *("SRC | sort -o FILE", "SRC | sort -oFILE", "SRC | sort --outp=FILE", "SRC | uniq - FILE"),
    *("git diff --output=FILE", "git log --output FILE", "sed -i s/v/w/ FILE"),
    *("sed s/v/w/ FILE -i", "sed -n 'w FILE' victim", "cp victim FILE", "cp -t sub FILE"),
    *("{ SRC; } > FILE", "(SRC) > FILE", "> FILE", "SRC > FILE || SRC", "SRC 3>FILE"),
)
FILES = ("victim", "new", "sub/x", "sub", "/dev/null", "./victim", "sub/../victim", "link")


@st.composite
def write_lines(draw: st.DrawFn) -> str:
    """A line that writes FILE one of the ways a command line can."""
    line = draw(st.sampled_from(WRITES)).replace("SRC", draw(st.sampled_from(SOURCES)))
    return line.replace("FILE", draw(st.sampled_from(FILES)))


PROTECTED = (".moot/settings.json", ".git/config", "./.git/config", "sub/../.moot/settings.json")
IN_PLACES = ("FILE", "cd .moot && ONE", "cd sub && ONE", "cd .git && ONE", "(cd sub) && ONE")
"""Where a write may land: a protected file named, or reached after `cd`."""


@st.composite
def protected_writes(draw: st.DrawFn) -> str:
    """A line that writes a protected file, named from the root or after a `cd`."""
    line = draw(st.sampled_from(WRITES)).replace("SRC", draw(st.sampled_from(SOURCES)))
    place = draw(st.sampled_from(IN_PLACES))
    name = draw(st.sampled_from((*PROTECTED, "settings.json", "config", "../.git/config")))
    if place == "FILE":
        return line.replace("FILE", draw(st.sampled_from(PROTECTED)))
    return place.replace("ONE", line.replace("FILE", name))
