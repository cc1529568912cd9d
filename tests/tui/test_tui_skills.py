"""The app with a session's files: its skills and commands in the slash menu (with their
descriptions), `/name args` as `RunCommand`, `# note` as `NoteToMemory`, and `/skills`."""

from __future__ import annotations

from msgspec.structs import replace

from moot.protocol import ops
from moot.protocol.client import CommandInfo, FileProblem, InstructionFiles, SkillInfo
from moot.testing import FakeClient
from tui_apps import app_for

FILES = InstructionFiles(
    skills=(
        SkillInfo("code-review", "Review code for bugs", "shipped", "/s/code-review/SKILL.md"),
    ),
    commands=(
        CommandInfo("code-review", "Review code for bugs", "skill", "[files]"),
        CommandInfo("deploy", "Ship it", "command", "<env>"),
    ),
    problems=(FileProblem("/w/.moot/skills/bad/SKILL.md", "`name` is required"),),
)


def client() -> FakeClient:
    return FakeClient(status=replace(FakeClient().status(), instructions=FILES))


async def test_session_commands_are_offered_and_run_as_run_command() -> None:
    fake = client()
    app = app_for(fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        listed = dict(app.commands.completions("de"))
        assert listed == {"deploy": "Ship it (command)"}
        await pilot.press(*"/deploy staging", "enter")
        await pilot.pause()
        await pilot.press(*"# always run the linter", "enter")
        await pilot.pause()
        assert fake.ops == [
            ops.RunCommand(name="deploy", arguments="staging"),
            ops.NoteToMemory(text="always run the linter"),
        ]


async def test_skills_lists_each_skill_and_the_problems() -> None:
    fake = client()
    app = app_for(fake)
    said: list[str] = []
    app.commands.say = lambda text, **kw: said.append(str(text))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await app.registry.run(app.commands, "/skills")
        await pilot.pause()
    (text,) = said
    assert "- `code-review` [shipped]: Review code for bugs" in text
    assert "- error: /w/.moot/skills/bad/SKILL.md: `name` is required" in text
    assert fake.ops == []
