"""process.is_alive reads /proc: a server spawned a moment ago (still in exec) or killed a moment ago (still
exiting) shows an empty command line for a while. /proc is scripted here, per read, as the kernel showed it for
noida-db under load (#18: `services up` declared a live noida dead in 0.02 s and left it running unrecorded)."""

from newskg.services import process

MARKER = "noida-db"
NOIDA = b"/srv/newskg/.venv/bin/python\0/srv/newskg/.venv/bin/noida-db\0start\0--only\0kafka\0"


class ScriptedProc:
    """Stands in for pathlib.Path over /proc/PID: each read of cmdline and stat returns the next scripted state."""

    def __init__(self, states: list[tuple[bytes, str]]):
        self.states, self.reads = states, 0

    def __call__(self, path: str) -> "ScriptedProc":
        self.path = path
        return self

    def _state(self) -> tuple[bytes, str]:
        return self.states[min(self.reads, len(self.states) - 1)]

    def read_bytes(self) -> bytes:  # cmdline is read first
        return self._state()[0]

    def read_text(self) -> str:  # then stat: the read of one state is complete
        state = self._state()[1]
        self.reads += 1
        return f"4242 (noida-db) {state} 1 4242 4242 0 -1 4194304 1 0 0 0"


def test_a_server_still_in_exec_counts_as_alive_once_its_command_line_shows(monkeypatch):
    proc = ScriptedProc([(b"", "R"), (b"", "R"), (NOIDA, "S")])
    monkeypatch.setattr(process, "Path", proc)
    assert process.is_alive(4242, MARKER)


def test_a_killed_server_is_dead_once_a_zombie_and_another_program_on_a_reused_pid_is_not_ours(monkeypatch):
    monkeypatch.setattr(process, "Path", ScriptedProc([(b"", "R"), (b"", "Z")]))
    assert not process.is_alive(4242, MARKER)
    monkeypatch.setattr(process, "Path", ScriptedProc([(b"/usr/bin/python3\0-m\0http.server\0", "S")]))
    assert not process.is_alive(4242, MARKER)


def test_an_empty_command_line_that_never_fills_is_not_ours(monkeypatch):
    monkeypatch.setattr(process, "EMPTY_CMDLINE_WAIT_S", 0.1)
    monkeypatch.setattr(process, "Path", ScriptedProc([(b"", "S")]))  # e.g. a kernel thread on a reused pid
    assert not process.is_alive(4242, MARKER)
