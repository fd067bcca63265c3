"""Vega-Lite specs drawn to SVG and PNG by vl-convert (with the CJK font: perfboard.fonts),
in this process or, in the dashboard's server, in processes of their own.

vl-convert holds the GIL while it draws (0.25 s for one of the weekly report's charts): in
the server, every other session's page stood still meanwhile, four charts a report. The
server starts DRAWERS drawing processes (start(), from scripts/serve.py) and waits on them
with the GIL free; side_by_side() draws a report's charts at once, one a process (the four of
a week nobody had opened took 0.30 s one after another on the 10 M store). A command line
(`python -m perfboard report`) and the tests draw in their own process, as before. The
same vl-convert, fonts and spec give the same bytes either way.

The drawing process is `python -m perfboard.drawing`, spoken to over its stdin and stdout
(a request: a length and the JSON of kind, spec and options; an answer: a status byte, a
length and the bytes). Not a multiprocessing pool: a spawned worker imports the parent's
__main__, and in a Streamlit server that is the page script being run. It imports only
vl-convert and the font, and ends when the server does (its stdin closes).
"""

from __future__ import annotations

import json
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_LENGTH = struct.Struct(">I")
OK, FAILED = b"0", b"1"
# Two: the machines the dashboard is served from have a few cores, and a report holds four
# charts. Each process holds vl-convert and the font (80-150 MB).
DRAWERS = 2


class _Drawer:
    """A drawing process, one request at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "perfboard.drawing"],
            cwd=Path(__file__).resolve().parent.parent,  # where perfboard is, wherever we are
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def draw(self, request: dict[str, Any]) -> bytes:
        body = json.dumps(request).encode()
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        # One caller at a time (_Pool): it waits here holding no GIL, nor does the drawing.
        stdin.write(_LENGTH.pack(len(body)) + body)
        stdin.flush()
        status = stdout.read(1)
        answer = _read_exactly(stdout, _LENGTH.unpack(_read_exactly(stdout, 4))[0])
        if status == FAILED:
            raise ValueError(f"vl-convert could not draw the chart: {answer.decode()}")
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


class _Pool:
    """The drawing processes; a request goes to an idle one, or waits for one."""

    def __init__(self, size: int) -> None:
        self.drawers = [_Drawer() for _ in range(size)]
        self.idle: queue.SimpleQueue[_Drawer] = queue.SimpleQueue()
        for drawer in self.drawers:
            self.idle.put(drawer)

    def draw(self, request: dict[str, Any]) -> bytes:
        drawer = self.idle.get()
        try:
            return drawer.draw(request)
        finally:
            self.idle.put(drawer)

    def close(self) -> None:
        for drawer in self.drawers:
            drawer.close()


_pool: _Pool | None = None
_start_lock = threading.Lock()


def start() -> None:
    """Start the drawing processes (once) and have each load vl-convert and the font now,
    not on a page's first chart."""
    global _pool
    with _start_lock:
        if _pool is None:
            _pool = _Pool(DRAWERS)
    side_by_side(svg, [_EMPTY] * DRAWERS)


def stop() -> None:
    """Back to drawing in this process."""
    global _pool
    with _start_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.close()


def drawing_pids() -> list[int]:
    """The drawing processes' pids; none when charts are drawn in this process."""
    pool = _pool
    return [] if pool is None else [drawer.proc.pid for drawer in pool.drawers]


def svg(spec: dict[str, Any]) -> str:
    return _drawn({"kind": "svg", "spec": spec}).decode()


def side_by_side(draw: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """draw(item) for each item, in order: in threads, one a drawing process, when there
    are drawing processes (each thread waits on a pipe, holding no GIL meanwhile)."""
    pool = _pool
    if pool is None or len(items) < 2:
        return [draw(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(len(items), len(pool.drawers))) as threads:
        return list(threads.map(draw, items))


def png(spec: dict[str, Any], scale: float = 2) -> bytes:
    return _drawn({"kind": "png", "spec": spec, "scale": scale})


def _drawn(request: dict[str, Any]) -> bytes:
    global _pool
    pool = _pool
    if pool is not None:
        try:
            return pool.draw(request)
        except (OSError, EOFError):  # a process died: drawn here from now on (the others
            with _start_lock:  # end with the server, as their stdin closes)
                if _pool is pool:
                    _pool = None
    return _draw(request)


def _draw(request: dict[str, Any]) -> bytes:
    from perfboard.fonts import vl_convert

    vlc = vl_convert()
    if request["kind"] == "svg":
        return vlc.vegalite_to_svg(request["spec"]).encode()
    return vlc.vegalite_to_png(request["spec"], scale=request["scale"])


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the drawing process ended")
    return data


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """The drawing process: requests in, drawings out, until stdin closes."""
    while True:
        head = stdin.read(4)
        if len(head) < 4:
            return
        request = json.loads(_read_exactly(stdin, _LENGTH.unpack(head)[0]))
        try:
            status, answer = OK, _draw(request)
        except Exception as error:  # any failure: said to the caller, who raises it
            status, answer = FAILED, str(error).encode()
        stdout.write(status + _LENGTH.pack(len(answer)) + answer)
        stdout.flush()


_EMPTY = {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "mark": "point"}

if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
