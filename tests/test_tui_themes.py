"""Theme files: the shipped ones, the person's own from the config dir (which win on a name
clash), and a bad file, which is a warning naming the file and the field, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.tui.themes import ThemeProblem, load_themes, read_theme


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_shipped_and_personal_themes_load_and_bad_files_are_named(private_moot_home: Path) -> None:
    themes = private_moot_home / "config" / "themes"
    write(themes, "mine.toml", 'name = "mine"\nprimary = "#ff8800"\ndark = true\n')
    write(themes, "moot-light.json", '{"name": "moot-light", "primary": "#123456"}')
    write(themes, "typo.toml", 'name = "typo"\nprimray = "#fff"\n')
    write(themes, "colour.toml", 'name = "colour"\nprimary = "not a colour"\n')
    write(themes, "broken.toml", "name = \n")

    loaded, warnings = load_themes()

    by_name = {t.name: t for t in loaded}
    assert {"moot-dark", "moot-light", "moot-high-contrast", "mine"} <= set(by_name)
    assert by_name["moot-light"].primary == "#123456"  # the person's file wins
    assert not {"typo", "colour", "broken"} & set(by_name)
    said = "\n".join(warnings)
    assert f"{themes / 'typo.toml'}: unknown field 'primray'" in said
    assert str(themes / "colour.toml") in said and str(themes / "broken.toml") in said
    assert len(warnings) == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\nprimary = "#fff"\ndark = "yes"\n', "'dark' must be true or false"),
        ('name = "x"\nprimary = 3\n', "'primary' must be a colour string"),
        ('primary = "#fff"\n', "needs at least 'name' and 'primary'"),
        ('name = "x"\nprimary = "#fff"\nvariables = 1\n', "'variables' must be a table"),
    ],
)
def test_each_kind_of_bad_field_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "t.toml", text)
    with pytest.raises(ThemeProblem, match=message):
        read_theme(path)


async def test_the_app_tells_a_bad_theme_file_in_the_chat(private_moot_home: Path) -> None:
    from moot.history import PromptHistory
    from moot.testing import FakeClient
    from moot.tui.app import MootApp

    write(private_moot_home / "config" / "themes", "typo.toml", 'name = "t"\nprimray = "#f"\n')
    app = MootApp(FakeClient(), history=PromptHistory(None))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = "\n".join(str(block.render()) for block in app.chat.children)
    assert "theme skipped" in shown and "typo.toml" in shown


async def test_slash_theme_switches_and_is_remembered(private_moot_home: Path) -> None:
    from moot.history import PromptHistory
    from moot.testing import FakeClient
    from moot.tui.app import MootApp

    app = MootApp(FakeClient(), history=PromptHistory(None))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press(*"/theme moot-light", "enter")
        await pilot.pause()
        assert app.theme == "moot-light"
    again = MootApp(FakeClient(), history=PromptHistory(None))
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert again.theme == "moot-light"  # remembered for the next start
