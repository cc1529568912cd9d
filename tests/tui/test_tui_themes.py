"""Theme files: the shipped ones, the person's own from the config dir (which win on a name
clash), and a bad file, which is a warning naming the file and the field, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.tui.themes import ThemeProblem, load_themes, read_theme
from tui_apps import app_for


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
    assert f"{themes / 'typo.toml'}: primray: not a theme field (did you mean 'primary'?)" in said
    assert f"{themes / 'colour.toml'}: primary: 'not a colour' is not a colour" in said
    assert str(themes / "broken.toml") in said
    assert len(warnings) == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\nprimary = "notacolor"\n', "primary: 'notacolor' is not a colour"),
        ('name = "x"\nprimary = "#fff"\naccent = "#ff"\n', "accent: '#ff' is not a colour"),
        ('name = "x"\nprimary = 3\n', "primary: 3 is not a colour"),
        ('name = "x"\nprimary = "#fff"\ndark = "yes"\n', "dark: 'yes' is not true or false"),
        ('name = "x"\nprimary = "#fff"\ntext_alpha = true\n', "text_alpha: True is not a number"),
        ('name = ""\nprimary = "#fff"\n', "name: '' is not a name"),
        ('primary = "#fff"\n', "name: missing (a theme needs 'name' and 'primary')"),
        (
            'name = "x"\nprimary = "#fff"\nsecondray = "#000"\n',
            "secondray: not a theme field (did you mean 'secondary'?)",
        ),
        ('name = "x"\nprimary = "#fff"\nzzz = 1\n', "zzz: not a theme field (fields: name,"),
        ('name = "x"\nprimary = "#fff"\nvariables = 1\n', "variables: not a table of variables"),
        (
            'name = "x"\nprimary = "#fff"\n[variables]\nfoo = 3\n',
            "variables.foo: not a Textual variable (Textual's theme variables are listed",
        ),
        (
            'name = "x"\nprimary = "#fff"\n[variables]\nfooter-key-foregrund = "#fff"\n',
            "variables.footer-key-foregrund: not a Textual variable"
            " (did you mean 'footer-key-foreground'?)",
        ),
        (
            'name = "x"\nprimary = "#fff"\n[variables]\nfooter-key-foreground = 3\n',
            "variables.footer-key-foreground: 3 is not a colour",
        ),
        (
            'name = "x"\nprimary = "#fff"\n[variables]\nfooter-key-foreground = "nope"\n',
            "variables.footer-key-foreground: 'nope' is not a colour",
        ),
        (
            'name = "x"\nprimary = "#fff"\n[variables]\nlink-style = "blinky"\n',
            "variables.link-style: 'blinky' is not a text style",
        ),
    ],
)
def test_each_kind_of_bad_field_or_variable_is_named(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, "t.toml", text)
    with pytest.raises(ThemeProblem) as raised:
        read_theme(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)


def test_every_problem_of_a_file_is_named_in_its_one_warning(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "t.toml",
        'name = "x"\nprimary = "notacolor"\nprimray = "#fff"\n[variables]\nfoo = "#fff"\n',
    )
    with pytest.raises(ThemeProblem) as raised:
        read_theme(path)
    assert str(raised.value) == (
        f"{path}: primary: 'notacolor' is not a colour;"
        " primray: not a theme field (did you mean 'primary'?);"
        " variables.foo: not a Textual variable (Textual's theme variables are listed at"
        " textual.textualize.io)"
    )


def test_good_variables_load_as_textual_takes_them(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "t.toml",
        'name = "x"\nprimary = "#fff"\n[variables]\nfooter-key-foreground = "#ff0000 50%"\n'
        'text = "auto 80%"\nlink-style = "bold not underline"\n',
    )
    theme = read_theme(path)
    assert theme.variables["link-style"] == "bold not underline"


async def test_a_theme_with_a_bad_variable_never_reaches_the_stylesheet(
    private_moot_home: Path,
) -> None:
    """Textual would take it and fail its stylesheet at the switch: the app would end."""
    from moot.testing import FakeClient

    write(
        private_moot_home / "config" / "themes",
        "bad.toml",
        'name = "bad"\nprimary = "#ff8800"\n[variables]\nfooter-key-foreground = "nope"\n',
    )
    app = app_for(FakeClient())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "bad" not in app.available_themes
        await pilot.press(*"/theme bad", "enter")
        await pilot.pause()
        assert app.is_running and app.theme != "bad"


async def test_the_app_tells_a_bad_theme_file_in_the_chat(private_moot_home: Path) -> None:
    from moot.testing import FakeClient

    write(private_moot_home / "config" / "themes", "typo.toml", 'name = "t"\nprimray = "#f"\n')
    app = app_for(FakeClient())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = "\n".join(str(block.render()) for block in app.chat.children)
    assert "theme skipped" in shown and "typo.toml" in shown


async def test_slash_theme_switches_and_is_remembered(private_moot_home: Path) -> None:
    from moot.testing import FakeClient

    app = app_for(FakeClient())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press(*"/theme moot-light", "enter")
        await pilot.pause()
        assert app.theme == "moot-light"
    again = app_for(FakeClient())
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert again.theme == "moot-light"  # remembered for the next start


def test_a_start_after_the_first_reads_its_toml_themes_from_the_cache_without_tomllib(
    private_moot_home: Path,
) -> None:
    """The app reads its themes as it starts (a benchmark): a TOML file unchanged since a start
    cached it is read from `<cache dir>/themes.json`, and tomllib is not imported at all."""
    import json
    import os
    import subprocess
    import sys
    import time

    mine = write(
        private_moot_home / "config" / "themes", "mine.toml", 'name = "mine"\nprimary = "#ff8800"\n'
    )
    settled = time.time() - 60
    os.utime(mine, (settled, settled))  # still for a minute, as a person's file is
    code = (
        "import json, sys\n"
        "from moot.tui.themes import load_themes\n"
        "themes, warnings = load_themes()\n"
        "print(json.dumps([sorted((t.name, t.primary) for t in themes), warnings,"
        " 'tomllib' in sys.modules]))"
    )
    env = {**os.environ, "MOOT_HOME": str(private_moot_home)}

    def start() -> list[object]:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    first, second = start(), start()

    assert ["mine", "#ff8800"] in first[0] and first[1] == [] and first[2] is True
    assert second == [first[0], [], False]  # the same themes, no tomllib
    assert (private_moot_home / "cache" / "themes.json").is_file()


def test_the_theme_cache_forgets_files_deleted_since(private_moot_home: Path) -> None:
    """Each start that parses a theme file saves the cache without the files gone meanwhile
    (entries of deleted files were kept for good)."""
    import json
    import os
    import subprocess
    import sys
    import time

    folder = private_moot_home / "config" / "themes"
    settled = time.time() - 60
    for name in ("kept", "deleted"):
        os.utime(write(folder, f"{name}.toml", f'name = "{name}"\n'), (settled, settled))
    env = {**os.environ, "MOOT_HOME": str(private_moot_home)}
    start = [sys.executable, "-c", "from moot.tui.themes import load_themes; load_themes()"]
    subprocess.run(start, env=env, check=True)
    (folder / "deleted.toml").unlink()
    os.utime(write(folder, "new.toml", 'name = "new"\n'), (settled, settled))
    subprocess.run(start, env=env, check=True)

    cached = json.loads((private_moot_home / "cache" / "themes.json").read_text())
    mine = sorted(Path(key).name for key in cached if Path(key).parent == folder)
    assert mine == ["kept.toml", "new.toml"]  # moot's own themes are cached beside them


def test_a_theme_file_changed_since_it_was_cached_is_read_again(private_moot_home: Path) -> None:
    import os
    import time

    mine = write(
        private_moot_home / "config" / "themes", "mine.toml", 'name = "mine"\nprimary = "#ff8800"\n'
    )
    os.utime(mine, (time.time() - 60,) * 2)
    assert read_theme(mine).primary == "#ff8800"  # now cached

    mine.write_text('name = "mine"\nprimary = "#0088ff"\n')  # the same size, changed
    os.utime(mine, (time.time() - 30,) * 2)

    assert read_theme(mine).primary == "#0088ff"
    mine.write_text('name = "mine"\nprimary = "#00ff88"\n')  # changed just now: never cached
    assert read_theme(mine).primary == "#00ff88"
