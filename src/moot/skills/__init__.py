"""What people teach moot with plain files, in the formats other coding agents read.

- Skills (`SKILL.md` bundles in the open Agent Skills format): `skill.py` reads one,
  `discovery.py` finds them all (shipped, the user's, the project's; the closest wins),
  `index.py` lists them for the model under a budget, `tool.py` is the `skill` tool that loads
  one, `grants.py` pre-approves a skill's `allowed-tools` while it is active.
- Memory (`AGENTS.md`, `CLAUDE.md` where a directory has none): `memory.py`.
- Custom slash commands (`.moot/commands/*.md`): `commands.py`; `arguments.py` fills in
  `$ARGUMENTS` and `$1`..`$9` for both.
- Agent definitions (`.moot/agents/*.md`), peers of the session: `agents.py`.
- `guidance.py` loads all of it for a session, once, as it opens.

The repository is hostile: everything here is read on the host through `files.py`, which keeps
each read inside its root (the repository, the user's config dir, moot's own folder), refuses
symlinks that lead out, and caps sizes. Nothing here runs a file: a skill's `scripts/` run only
when the model runs them through the sandboxed shell, which asks.
"""
