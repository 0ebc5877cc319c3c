"""The one progress bar of the commands: transient, on stderr, so that ``--output json > out.json``
still shows it and a finished run leaves only its report."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any


def wanted(no_progress: bool) -> bool:
    """Whether to draw a bar at all: not asked away, and stderr is a terminal someone watches."""
    return not no_progress and sys.stderr.isatty()


class ProgressBar:
    """``<label> ━━━━━━  done/total  elapsed`` (``failures``: and how many failed, and the time left).

    Use it as a context manager around the work. When ``show`` is false nothing is drawn and rich
    is not even imported; :meth:`print` still writes to stderr. ``total`` may stay None until the
    first :meth:`update` says it.
    """

    def __init__(self, label: str, total: int | None = None, *, show: bool = True, failures: bool = False) -> None:
        self.shown = show
        self._console: Any = None
        self._progress: Any = None
        self._task: Any = None
        if not show:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns: list[ProgressColumn] = [TextColumn(label), BarColumn(), MofNCompleteColumn()]
        if failures:
            columns.append(TextColumn("{task.fields[failed]} failed"))
        columns.append(TimeElapsedColumn())
        if failures:
            columns.append(TimeRemainingColumn())
        self._console = Console(stderr=True)
        self._progress = Progress(*columns, transient=True, console=self._console)
        self._task = self._progress.add_task(label, total=total, failed=0)

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` of ``total`` finished (the signature of the progress callbacks of the runners)."""
        if self._progress is not None:
            if total is None:
                self._progress.update(self._task, completed=done)
            else:
                self._progress.update(self._task, completed=done, total=total)

    def advance(self, failed: int = 0) -> None:
        """One more finished; ``failed`` of all finished so far have failed."""
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failed=failed)

    @property
    def callback(self) -> Callable[[int, int], None] | None:
        """:meth:`update` when a bar is drawn, else None: a runner then skips the call altogether."""
        return self.update if self.shown else None

    def print(self, text: str) -> None:
        """Write a line to stderr above the bar, taken literally (no rich markup)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        self._console.print(text, markup=False)
