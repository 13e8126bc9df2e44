"""Text from a recording or a server is plain text everywhere (issue 10, findings 2 and 3): escape
sequences come out as visible escapes, markup is never parsed (nor clicked), CSV cells never start
a formula, HTML in markdown and the report is escaped."""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest
from hostile import ESC, FORMULA, INVISIBLE, make_hostile
from tui_support import text_of, wait_for

from pgio_tui.cli import main
from pgio_tui.safe_text import csv_cell, html_text, markdown_cell, plain_text, printable
from pgio_tui.store.listing import list_recordings
from pgio_tui.store.reader import Recording
from pgio_tui.tui.widgets.lines import LinesView


@pytest.fixture(scope="module")
def hostile(fixture_file, tmp_path_factory):
    return make_hostile(fixture_file, tmp_path_factory.mktemp("hostile") / "hostile.pgio")


# --- the module ---------------------------------------------------------------------------------

def test_printable_makes_control_characters_visible():
    assert printable("a\x1b[2Jb\x07\x9b\u202e\x00") == "a\\x1b[2Jb\\x07\\x9b\\u202e\\x00"
    assert printable("two\nlines\t") == "two\\x0alines\\x09"
    assert printable("two\nlines", newlines=True) == "two\nlines"
    assert printable("nvme0n1 ✓ ä") == "nvme0n1 ✓ ä"
    assert printable(12.5) == "12.5"


def test_printable_shows_every_format_separator_and_tag_character():
    """Issue 21 row 10: 145 format and separator characters passed (a bidi mark, U+2028/2029, the
    soft hyphen, tags). Now every Cc, Cf, Zl, Zp, Cs and tag character becomes an ASCII escape,
    and nothing else printable changes."""
    assert printable("a\u061c\u2028\U000E0041b") == "a\\u061c\\u2028\\U000e0041b"
    assert printable("\u00ad\u180e\u206a\u206f\U000e0001\u2029\ud800") == \
        "\\xad\\u180e\\u206a\\u206f\\U000e0001\\u2029\\ud800"
    hidden = [chr(c) for c in range(0x110000)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cs") or 0xE0000 <= c <= 0xE007F]
    assert len(hidden) > 2000
    for ch in hidden:
        shown = printable(f"x{ch}y")
        assert shown.isascii() and shown.isprintable() and ch not in shown, repr(ch)
    assert printable("a\u2028b\nc", newlines=True) == "a\\u2028b\nc"
    kept = "nvme0n1 ✓ ä 日本語 \u00a0\u3000\ue000 🙂 \u05d0"  # letters, symbols, spaces, private use, RTL letters
    assert printable(kept + "\n") == kept + "\\x0a"


def test_csv_cells_never_start_a_formula():
    for cell in ("=1+1", "+cmd", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", FORMULA):
        assert csv_cell(cell).startswith("'")
    for cell in ("-1.5", "+24.3", "-1e-05", "1,234", "nvme0n1", "", "- "[:1] + "5"):
        assert csv_cell(cell) == cell
    assert csv_cell(-3) == -3 and csv_cell(None) is None
    assert csv_cell("=\x1b") == "'=\\x1b"


def test_markdown_and_html_escape_raw_html():
    assert markdown_cell("<script>a|b</script> & x > y") == "&lt;script>a\\|b&lt;/script> &amp; x > y"
    assert html_text('<b a="1">\x1b') == "&lt;b a=&quot;1&quot;&gt;\\x1b"


def test_plain_text_is_never_markup():
    t = plain_text("[bold]x[/] [@click=app.quit]y[/]\x1b", style="red")
    assert t.plain == "[bold]x[/] [@click=app.quit]y[/]\\x1b" and not t.spans


# --- every stdout format ------------------------------------------------------------------------

def run_cli(capsys, *argv) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert ESC not in out and "\x07" not in out and "\x9b" not in out, "raw control bytes on stdout"
    assert not set(INVISIBLE) & set(out), "raw format or separator characters on stdout"
    return out


def test_info_shows_escapes_not_bytes(capsys, hostile):
    out = run_cli(capsys, "info", str(hostile))
    assert "\\x1b]52;c;" in out and "[@click=app.screenshot" in out
    assert "\\u061c\\u2028\\u2029\\xad\\U000e0001\\U000e0041" in out


def test_export_csv_and_json(capsys, hostile):
    out = run_cli(capsys, "export", str(hostile), "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert any("\\x1b[2J" in h for h in rows[0])  # device names in the header, escaped
    cells = [c for row in rows for c in row]
    assert not [c for c in cells if c[:1] and c[0] in "=+@" or (c[:1] == "-" and not c[1:2].isdigit())]
    assert f"'{FORMULA}" in cells  # the checkpoint kind, neutralised
    out = run_cli(capsys, "export", str(hostile), "--format", "json")
    assert [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_diff_formats(capsys, hostile, fixture_file, fmt):
    out = run_cli(capsys, "diff", str(fixture_file), str(hostile), "--format", fmt)
    if fmt == "table":
        assert "[@click=app.screenshot" in out  # shown, not parsed (no MarkupError)
    if fmt == "markdown":
        assert "<script>" not in out and "&lt;script>" in out
    if fmt == "csv":
        cells = [c for row in csv.reader(io.StringIO(out)) for c in row]
        assert f"'{FORMULA}" in cells and FORMULA not in cells
    if fmt == "json":
        json.loads(out)


def test_report_escapes_html(capsys, hostile, tmp_path):
    main(["report", str(hostile), "-o", str(tmp_path / "r.html")])
    html = (tmp_path / "r.html").read_text()
    assert "<script>alert" not in html and ESC not in html and "&lt;script&gt;alert(1)" in html
    assert not set(INVISIBLE) & set(html)


# --- the TUI --------------------------------------------------------------------------------------

def _shown(app) -> str:
    """Everything the app's LinesViews show, and every border title and subtitle."""
    parts = []
    for w in app.screen.query("*"):
        if isinstance(w, LinesView):
            parts.append(text_of(w))
        parts += [str(w.border_title or ""), str(w.border_subtitle or "")]
    return "\n".join(parts)


@pytest.mark.asyncio
async def test_replay_shows_escapes_and_never_clicks(hostile, tmp_path, monkeypatch):
    from pgio_tui.tui.replay import ReplayApp

    monkeypatch.chdir(tmp_path)
    with Recording(hostile) as rec:
        app = ReplayApp(rec, playing=False, start_t=rec.start_t + 100)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_for(pilot, lambda: app.history.last is not None)
            for key in ("2", "4", "6", "right", "n", "l"):
                await pilot.press(key)
            await pilot.pause()
            shown = _shown(app)
            assert ESC not in shown and "\\x1b" in shown
            await pilot.click(offset=(10, 10))
            await pilot.press("q")
    assert not list(tmp_path.glob("*.svg")) and not (tmp_path / "x").exists()


@pytest.mark.asyncio
async def test_diff_tui_and_picker_take_markup_as_text(hostile, fixture_file, tmp_path):
    from pgio_tui.analysis.compare import compare
    from pgio_tui.tui.diff_screen import diff_app
    from pgio_tui.tui.screens.picker import PickerApp

    app = diff_app(compare(str(fixture_file), str(hostile), "start"))
    async with app.run_test(size=(160, 48)) as pilot:
        for key in ("2", "3", "1", "down", "down"):
            await pilot.press(key)
        await pilot.pause()
        assert ESC not in _shown(app)
        await pilot.press("q")
    folder = tmp_path / "[" / "]recs[bold"  # the path reads .../[/]recs[bold
    folder.mkdir(parents=True)
    make_hostile(fixture_file, folder / "[bold]x[red.pgio")
    app = PickerApp(str(folder), list_recordings(folder))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        assert app.is_running
        await pilot.press("q")


@pytest.mark.asyncio
async def test_record_path_typed_with_r_is_text(tmp_path):
    from test_tui_pilot import live_app

    from pgio_tui.tui.screens.dialogs import PromptScreen

    app = live_app(tmp_path)
    path = tmp_path / "[" / "]rec[bold" / "a[" / "]b.pgio"  # .../[/]rec[bold/a[/]b.pgio
    path.parent.mkdir(parents=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 2)
        await pilot.press("r")
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one("#prompt-input").value = str(path)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.state.recording == str(path))
        await wait_for(pilot, lambda: "]b.pgio" in _shown(app))
        await pilot.press("r")
        await pilot.press("q")
    assert app.source.wait_closed(5)
