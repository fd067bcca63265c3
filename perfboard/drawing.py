"""Vega-Lite specs drawn to SVG and PNG by vl-convert (with the CJK font: perfboard.fonts),
in this process or, in the dashboard's server, in a process of their own.

vl-convert holds the GIL while it draws (0.25 s for one of the weekly report's charts): in
the server, every other session's page stood still meanwhile, four charts a report. The
server starts one drawing process (start(), from ui.warm_up) and waits on it with the GIL
free; a command line (`python -m perfboard report`) and the tests draw in their own
process, as before. The same vl-convert, fonts and spec give the same bytes either way.

The drawing process is `python -m perfboard.drawing`, spoken to over its stdin and stdout
(a request: a length and the JSON of kind, spec and options; an answer: a status byte, a
length and the bytes). Not a multiprocessing pool: a spawned worker imports the parent's
__main__, and in a Streamlit server that is the page script being run. It imports only
vl-convert and the font, and ends when the server does (its stdin closes).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

_LENGTH = struct.Struct(">I")
OK, FAILED = b"0", b"1"


class _Drawer:
    """The drawing process, one request at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "perfboard.drawing"],
            cwd=Path(__file__).resolve().parent.parent,  # where perfboard is, wherever we are
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.lock = threading.Lock()

    def draw(self, request: dict[str, Any]) -> bytes:
        body = json.dumps(request).encode()
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        with self.lock:  # a session waiting here holds no GIL; the drawing holds none of ours
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


_drawer: _Drawer | None = None
_start_lock = threading.Lock()


def start() -> None:
    """Start the drawing process (once) and have it load vl-convert and the font now, not
    on a page's first chart."""
    global _drawer
    with _start_lock:
        if _drawer is None:
            _drawer = _Drawer()
    svg(_EMPTY)


def stop() -> None:
    """Back to drawing in this process."""
    global _drawer
    with _start_lock:
        drawer, _drawer = _drawer, None
    if drawer is not None:
        drawer.close()


def drawing_pid() -> int | None:
    """The drawing process's pid, or None when charts are drawn in this process."""
    drawer = _drawer
    return None if drawer is None else drawer.proc.pid


def svg(spec: dict[str, Any]) -> str:
    return _drawn({"kind": "svg", "spec": spec}).decode()


def png(spec: dict[str, Any], scale: float = 2) -> bytes:
    return _drawn({"kind": "png", "spec": spec, "scale": scale})


def _drawn(request: dict[str, Any]) -> bytes:
    global _drawer
    drawer = _drawer
    if drawer is not None:
        try:
            return drawer.draw(request)
        except (OSError, EOFError):  # the process died: drawn here from now on
            with _start_lock:
                if _drawer is drawer:
                    _drawer = None
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
