"""`EarlyOpening`: what the thread opened is handed over once, its error raised where it is taken,
and a session the front end never took is closed when it ends."""

from __future__ import annotations

import threading

import pytest

from moot.frontend.opening import EarlyOpening


def test_what_opened_is_taken_once_and_a_second_call_opens_another() -> None:
    opened: list[int] = []

    def open_one() -> int:
        opened.append(len(opened) + 1)
        return opened[-1]

    opening = EarlyOpening(open_one)
    assert opening() == 1
    assert opening() == 2
    closed: list[int] = []
    opening.leave(closed.append)
    assert closed == []  # the front end took its session: it closes it


def test_the_opening_runs_in_another_thread_and_its_error_is_raised_where_it_is_taken() -> None:
    threads: list[threading.Thread] = []

    def fail() -> int:
        threads.append(threading.current_thread())
        raise ValueError("no such session")

    opening = EarlyOpening(fail)
    with pytest.raises(ValueError, match="no such session"):
        opening()
    assert threads and threads[0] is not threading.current_thread()


def test_a_session_never_taken_is_closed_when_the_front_end_ends() -> None:
    release = threading.Event()

    def slow() -> str:
        release.wait(5)
        return "session"

    opening = EarlyOpening(slow)
    closed: list[str] = []
    release.set()
    opening.leave(closed.append)  # waits for the opening still under way
    assert closed == ["session"]
    opening.leave(closed.append)
    assert closed == ["session"]
