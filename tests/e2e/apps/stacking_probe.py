"""Run as a script on a real X display with a window manager (tests/e2e/apps/xserver.py):
an MCP App asks for a write and for full screen, and what the user's screen and keyboard then do.

``python -m tests.e2e.apps.stacking_probe TMP ORDER`` prints one line, ``RESULT <JSON>``. ORDER is
``full-then-write`` (the app goes full screen, then asks for a write) or ``write-then-full`` (it
asks for a write, then for full screen while the dialog is open: ``asked_for_full_screen``).

- ``full_screen_after``: whether the app's full-screen window is still there once the dialog shows;
- ``stacking``: Helm's windows, bottom to top, as the window manager stacks them, by role;
- ``on_screen``: the share of the dialog's pixels the screen shows unchanged (1.0: nothing covers it);
- ``keys_in_app``: key presses the app's page saw of the ones typed after a click where the app
  was (real X events);
- ``toggles``: what 50 requests for full screen or inline got while the dialog was open;
- ``rearmed_on_focus`` / ``rearmed_on_uncover``: whether the input guard was up again after the
  dialog regained the focus / after a window that covered it went away;
- ``decision``: the dialog's answer once all that is over (None: still open);
- ``error``: what went wrong, if the scenario could not finish (the dialog vanished, say).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

GUARD_MS = 400
WAIT_SECONDS = 20.0


async def until(check: Callable[[], bool], what: str) -> None:
    print(f"waiting for {what}", file=sys.stderr, flush=True)
    try:
        async with asyncio.timeout(WAIT_SECONDS):
            while not check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"no {what} within {WAIT_SECONDS:.0f} s") from None


async def became(check: Callable[[], bool], within: float = 5.0) -> bool:
    """Whether ``check`` holds within ``within`` s (a wait bounded for an event that may not come)."""
    try:
        async with asyncio.timeout(within):
            while not check():
                await asyncio.sleep(0.02)
    except TimeoutError:
        return False
    return True


async def settle(seconds: float = 0.5) -> None:
    """Let the X server, the window manager and the engine deliver what was sent."""
    await asyncio.sleep(seconds)


def stacking(env: dict[str, str], roles: dict[int, str]) -> list[str]:
    out = subprocess.run(
        ["xprop", "-root", "_NET_CLIENT_LIST_STACKING"], env=env, capture_output=True, text=True, check=True
    ).stdout
    ids = [int(part.strip().rstrip(","), 16) for part in out.split("#", 1)[-1].split(",") if part.strip()]
    return [roles[i] for i in ids if i in roles]


def on_screen(dialog: Any) -> float:
    from ui.qt import QGuiApplication

    own = dialog.grab().toImage()
    origin = dialog.mapToGlobal(dialog.rect().topLeft())
    screen = QGuiApplication.primaryScreen().grabWindow(0, origin.x(), origin.y(), own.width(), own.height())
    seen = screen.toImage().convertToFormat(own.format())
    shots = Path(os.environ["PROBE_SHOTS"])
    screen.save(str(shots / "dialog-on-screen.png"))
    QGuiApplication.primaryScreen().grabWindow(0).save(str(shots / "screen.png"))
    step = 4
    same = total = 0
    for y in range(0, min(own.height(), seen.height()), step):
        for x in range(0, min(own.width(), seen.width()), step):
            total += 1
            same += own.pixel(x, y) == seen.pixel(x, y)
    return round(same / max(total, 1), 3)


def xdotool(env: dict[str, str], *args: str) -> None:
    subprocess.run(["xdotool", *args], env=env, check=True, capture_output=True)


async def scenario(tmp: Path, order: str) -> dict[str, Any]:
    from tests.e2e.apps.kit import Links, app_broker, app_host, in_app
    from tests.e2e.host.kit import Dialogs
    from ui.dialogs.confirm import ConfirmDialog
    from ui.qt import QMainWindow

    dialogs = Dialogs()

    def guarded(summary: Any, parent: Any, *, remaining: float | None) -> ConfirmDialog:
        dialog = ConfirmDialog(summary, parent, remaining=remaining, guard_ms=GUARD_MS)
        dialogs.shown.put_nowait(dialog)
        return dialog

    result: dict[str, Any] = {}
    async with app_broker(tmp) as (broker, ext_id):
        host = app_host(broker, guarded, Links())  # type: ignore[arg-type]
        window = QMainWindow()
        window.setWindowTitle("Helm")
        try:
            frame = host.frame("ws", ext_id, "i1", window)
            window.setCentralWidget(frame)
            window.resize(900, 700)
            window.show()
            view = await opened(frame)
            await in_app(
                view, "(window.keys = [], document.addEventListener('keydown', e => keys.push(e.key)), 1)"
            )
            if order == "full-then-write":
                await in_app(view, "board.mode('fullscreen')")
                await until(lambda: frame.full is not None and frame.full.isActiveWindow(), "full screen")
            view.web.setFocus()
            write = asyncio.ensure_future(in_app(view, "board.call('add_item', {text: 'x'})"))
            dialog = await asyncio.wait_for(dialogs.shown.get(), WAIT_SECONDS)
            try:
                if order == "write-then-full":
                    await until(
                        lambda: dialog.isVisible() and dialog.windowHandle().isExposed(), "the dialog"
                    )
                    result["asked_for_full_screen"] = (await in_app(view, "board.mode('fullscreen')"))[
                        "value"
                    ]
                    if frame.full is not None:
                        await until(lambda: frame.full.windowHandle().isExposed(), "full screen")
                await measure(result, window, frame, view, dialog)
                dialog.cancel_button.click()
            except Exception as err:  # what was measured so far still says what went wrong
                result["error"] = repr(err)
            try:
                await asyncio.wait_for(write, WAIT_SECONDS)
            except Exception as err:
                result.setdefault("error", f"the write got no answer: {err!r}")
        finally:
            await host.aclose()
            window.close()
    return result


async def measure(result: dict[str, Any], window: Any, frame: Any, view: Any, dialog: Any) -> None:
    from tests.e2e.apps.kit import in_app

    env = dict(os.environ)
    await until(lambda: dialog.isVisible() and dialog.windowHandle().isExposed(), "the dialog")
    await settle()
    result["full_screen_after"] = frame.full is not None
    roles = {int(window.winId()): "main", int(dialog.winId()): "dialog"}
    if frame.full is not None:
        roles[int(frame.full.winId())] = "full screen"
    result["stacking"] = stacking(env, roles)
    result["on_screen"] = on_screen(dialog)
    # Where the app was a moment ago (inline in the main window, beside the dialog): a click
    # there, then typing, as a user who has not yet seen the dialog would.
    corner = window.mapToGlobal(window.rect().bottomLeft())
    xdotool(env, "mousemove", str(corner.x() + 60), str(corner.y() - 60), "click", "1")
    await settle()
    xdotool(env, "type", "--delay", "20", "helm")
    await settle()
    result["keys_in_app"] = (await in_app(view, "window.keys"))["value"]
    toggles = await in_app(
        view,
        "Promise.all(Array.from({length: 50}, (_, i) =>"
        " board.mode(i % 2 ? 'inline' : 'fullscreen').then(r => r.mode)))",
    )
    result["toggles"] = sorted(set(toggles["value"]))
    result["rearmed_on_focus"] = await rearmed_on_focus(dialog)
    result["rearmed_on_uncover"] = await rearmed_on_uncover(dialog)
    result["decision"] = None if dialog.decision is None else dialog.decision.value


async def rearmed_on_focus(dialog: Any) -> bool:
    """Another window takes the focus, then the dialog takes it back: is the guard up again?"""
    from ui.qt import Qt, QWidget

    await until(lambda: not dialog.guarded, "the guard to end")
    other = QWidget(None, Qt.WindowType.Window)
    other.setWindowTitle("another window")
    other.resize(300, 200)
    other.show()
    other.activateWindow()
    await until(lambda: other.isActiveWindow(), "the other window to take the focus")
    await until(lambda: not dialog.guarded, "the guard to end")
    dialog.activateWindow()
    rearmed = await became(lambda: dialog.isActiveWindow() and dialog.guarded)
    other.close()
    return rearmed


async def rearmed_on_uncover(dialog: Any) -> bool:
    """A window covers the dialog, then goes: is the guard up again?"""
    from ui.qt import Qt, QWidget

    await until(lambda: not dialog.guarded, "the guard to end")
    cover = QWidget(None, Qt.WindowType.Window | Qt.WindowType.WindowStaysOnTopHint)
    cover.setGeometry(dialog.frameGeometry().adjusted(-40, -40, 40, 40))
    cover.show()
    cover.raise_()
    await until(lambda: cover.windowHandle().isExposed(), "a window to cover the dialog")
    await settle()
    await until(lambda: not dialog.guarded, "the guard to end")
    cover.close()
    return await became(lambda: dialog.guarded)


async def opened(frame: Any) -> Any:
    """The app's view once it is ready and initialized (the frame is already in a window)."""
    from ui.aio import emitted

    ready = emitted(frame.ready, WAIT_SECONDS)
    await asyncio.wait_for(frame.opening, WAIT_SECONDS)
    if frame.view is None:
        ready.close()
        raise AssertionError(f"the app did not open: {frame.notice.text()}")
    (view,) = await ready
    await asyncio.wait_for(view.session.started.wait(), WAIT_SECONDS)
    return view


def main(tmp: Path, order: str) -> None:
    from ui.host import prepare_engine

    dead = prepare_engine()
    import qasync

    from ui.qt import QApplication

    app = QApplication(["stacking-probe"])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        result = loop.run_until_complete(asyncio.wait_for(scenario(tmp, order), 120))
    print("RESULT " + json.dumps(result), flush=True)
    dead.close()
    os._exit(0)  # the answer is out; tearing the engine down in a short script only risks a crash


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
