"""The CLI's one progress bar: drawn only when asked, silent otherwise, and a callback runners accept."""

from __future__ import annotations

import pytest

from kubesched.cli.progress import ProgressBar, wanted


def test_a_hidden_bar_gives_runners_no_callback_and_still_prints_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ProgressBar("sweep", 3, show=False, failures=True) as bar:
        assert bar.callback is None
        bar.update(1, 3)
        bar.advance(failed=1)
        bar.print("FAILED [bold]x[/bold]: boom")
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "FAILED [bold]x[/bold]: boom\n"  # literally: no rich markup


@pytest.mark.parametrize(
    "failures, columns",
    [
        (False, ["Text", "Bar", "MofNComplete", "TimeElapsed"]),
        (True, ["Text", "Bar", "MofNComplete", "Text", "TimeElapsed", "TimeRemaining"]),
    ],
    ids=["label bar done/total elapsed", "and failures, time left"],
)
def test_a_shown_bar_counts_what_the_runner_reports(failures: bool, columns: list[str]) -> None:
    bar = ProgressBar("replaying", show=True, failures=failures)
    assert bar.callback == bar.update
    progress = bar._progress
    assert [type(c).__name__.removesuffix("Column") for c in progress.columns] == columns
    with bar:
        bar.update(5, 10)
        (task,) = progress.tasks
        assert (task.completed, task.total) == (5, 10)
        bar.advance(failed=2)
        assert task.completed == 6 and task.fields["failed"] == 2
    assert not progress.live.is_started


def test_no_bar_when_asked_away_or_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert wanted(no_progress=False)
    assert not wanted(no_progress=True)
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    assert not wanted(no_progress=False)
