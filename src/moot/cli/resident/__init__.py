"""The resident moot: a process that has already imported moot, and forks one child per `moot`
run, so that a start costs what the run itself does rather than what its imports do.

Start-up is mostly imports: a bare prompt_toolkit prompt takes ~540M instructions and the bare
Textual app ~974M, and moot's own modules add 350M and 509M on top before the session line is
shown, which no amount of laziness takes back (the prompt alone is already 1.28x the bare one).
A fork of a process that holds those modules starts with all of it done.

Off unless asked for (`"resident": true` in the user settings, or `MOOT_RESIDENT=1`):

- `client`: what `moot` runs first. It connects to the resident process's socket, checks that
  the process listening there is its user's, as unconfined as itself (`peer`), hands it the
  terminal (its stdin, stdout and stderr, by `SCM_RIGHTS`), its arguments, working directory,
  environment and umask, forwards the signals it gets and ends with the child's status. With no
  resident process, or one that refuses, `moot` runs in its own process as ever, and starts a
  resident process for next time as it ends.
- `switch`: whether a `moot` asks for one at all (read before anything else loads).
- `preload`: what the resident process imports, what those imports read of the environment,
  and how it tells that any of it changed on disk.
- `zygote`: the resident process. It imports what the front ends use, then answers one socket;
  each request is checked (`peer`: the same user and credentials, not confined, the same
  namespaces) and forked.
  It ends when its code changes on disk, or after `IDLE_S` with no child left.
- `child`: what a fork does before it runs `moot.cli.main`: it takes the client's terminal,
  environment and working directory as its own.
- `place`: where the socket lives (a directory only the user can enter) and which resident
  process a `moot` may use (the same interpreter, import path, locale and moot).
"""
