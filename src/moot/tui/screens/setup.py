"""The first-run screen: `moot` with no model configured shows it instead of refusing.

It shows what was found (keys in the environment and the key file for each provider; a local
Ollama or LM Studio answering, asked off the UI thread), takes a pasted key (saved as
`moot login` saves it, mode 0600), offers the catalog's models (and the local servers'), and
starts either a session with the chosen model (remembered in the user settings, so the next
start goes straight to the app) or the built-in demo. Everything it needs from outside the app
comes through `moot.client.setup_detect`; opening a session comes through the `FirstRun` the
app holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from moot.client import SetupError, setup_detect
from moot.client.setup_detect import Detection, ModelChoice
from moot.protocol.client import Client
from moot.settings import SettingsError


class FirstRun(msgspec.Struct, frozen=True):
    """How the app opens a session once the person has chosen (the edge decides what opens)."""

    open_model: Callable[[str], Client]
    """A new session in this directory with the model named."""
    open_demo: Callable[[], Client]
    """A new session of the demo: the scripted model, in its scratch folder."""
    detect: Callable[[], Detection] = setup_detect.detect
    """What was found; blocking, so it runs in a thread."""


class Started(msgspec.Struct):
    """What the screen ends with: the session to show, and a message to send for the person."""

    client: Client
    task: str | None = None


class SetupScreen(Screen[Started]):
    """Pick a model (or paste a key first), or try the demo."""

    CSS_PATH = "setup.tcss"

    def __init__(self, first_run: FirstRun) -> None:
        super().__init__()
        self._first_run = first_run
        self.detection: Detection | None = None
        self._choices: list[ModelChoice] = []

    def compose(self) -> ComposeResult:
        providers = setup_detect.key_providers()
        with VerticalScroll(id="setup"):
            yield Static("moot · first run", id="title")
            yield Static(
                "No model is set up yet. Pick one and start, or try the demo: "
                "it runs offline, without a key.",
                id="intro",
            )
            yield Static("Looking for keys and local model servers…", id="found")
            with Horizontal(classes="row"):
                yield Label("Key", classes="label")
                yield Select(
                    [(p, p) for p in providers],
                    value=providers[0],
                    allow_blank=False,
                    compact=True,
                    id="key-provider",
                )
                yield Input(
                    placeholder="paste an API key (not shown)",
                    password=True,
                    compact=True,
                    id="key",
                )
                yield Button("Save", id="save-key", compact=True)
            yield Static("", id="key-note")
            with Horizontal(classes="row"):
                yield Label("Model", classes="label")
                yield Input(
                    placeholder="type to filter the models",
                    compact=True,
                    select_on_focus=False,  # a letter typed on the list lands here and stays
                    id="model-filter",
                )
            yield OptionList(id="models")
            yield Static("", id="problem")
            with Horizontal(id="buttons"):
                yield Button("Start", id="start", variant="primary", compact=True)
                yield Button("Try the demo", id="demo", compact=True)
                yield Static("ctrl+c twice quits", id="quit-hint")

    def on_mount(self) -> None:
        self._detect()

    # ---- what was found ------------------------------------------------------------------

    @work(group="setup-detect", exclusive=True, exit_on_error=False)
    async def _detect(self) -> None:
        detection = await asyncio.to_thread(self._first_run.detect)
        self.show_detection(detection)

    def show_detection(self, detection: Detection) -> None:
        """Show what was found and the models it makes ready."""
        first = self.detection is None
        self.detection = detection
        self.query_one("#found", Static).update(_found_text(detection))
        self._choices = setup_detect.model_choices(detection)
        self._fill_models(self.query_one("#model-filter", Input).value)
        if first:
            ready = any(c.ready for c in self._choices)
            self.query_one("#models" if ready else "#key").focus()

    def _fill_models(self, needle: str) -> None:
        models = self.query_one("#models", OptionList)
        chosen = self._chosen()
        models.clear_options()
        shown = [c for c in self._choices if needle.lower() in c.name.lower()]
        models.add_options(Option(_model_label(c), id=c.name) for c in shown)
        names = [c.name for c in shown]
        if names:
            models.highlighted = names.index(chosen) if chosen in names else 0

    def _chosen(self) -> str | None:
        models = self.query_one("#models", OptionList)
        if models.highlighted is None or not models.option_count:
            return None
        return models.get_option_at_index(models.highlighted).id

    def _choice(self, name: str | None) -> ModelChoice | None:
        return next((c for c in self._choices if c.name == name), None)

    # ---- a key ---------------------------------------------------------------------------

    @on(Button.Pressed, "#save-key")
    @on(Input.Submitted, "#key")
    def _save_key(self) -> None:
        field = self.query_one("#key", Input)
        provider = str(self.query_one("#key-provider", Select).value)
        note = self.query_one("#key-note", Static)
        try:
            path = setup_detect.save_key(provider, field.value)
        except ValueError as exc:  # the key refused (`credentials.KeyRefused`)
            note.update(Text(str(exc), style="bold red"))
            note.add_class("-shown")
            return
        except OSError as exc:
            note.update(Text(f"cannot save the key: {exc}", style="bold red"))
            note.add_class("-shown")
            return
        field.value = ""
        note.update(f"saved the {provider} key to {path} (readable only by you)")
        note.add_class("-shown")
        self._detect()
        self.query_one("#models").focus()

    # ---- the model -------------------------------------------------------------------------

    @on(Input.Changed, "#model-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._fill_models(event.value)

    def on_key(self, event: events.Key) -> None:
        # The list has the focus when a model is ready, and the filter says "type to filter":
        # a letter typed on the list goes there (the list itself takes none).
        if event.is_printable and event.character and self.focused is self.query_one("#models"):
            field = self.query_one("#model-filter", Input)
            field.focus()
            field.insert_text_at_cursor(event.character)
            event.stop()
            event.prevent_default()

    @on(OptionList.OptionHighlighted, "#models")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        choice = self._choice(event.option.id)
        if choice is not None and not choice.ready:
            select = self.query_one("#key-provider", Select)
            if choice.provider in setup_detect.key_providers():
                select.value = choice.provider

    @on(Button.Pressed, "#start")
    @on(Input.Submitted, "#model-filter")
    @on(OptionList.OptionSelected, "#models")
    def _start_model(self) -> None:
        name = self._chosen()
        choice = self._choice(name)
        if name is None or choice is None:
            self._problem("pick a model first (type to filter the list)")
            return
        if not choice.ready:
            self._problem(f"no key for {choice.provider}: paste one above, then start")
            self.query_one("#key").focus()
            return
        try:
            client = self._first_run.open_model(name)
        except SetupError as exc:
            self._problem(str(exc))
            return
        try:
            setup_detect.remember_model(name)
        except SettingsError as exc:
            self.app.notify(f"not remembered: {exc}", severity="warning")
        self.dismiss(Started(client))

    @on(Button.Pressed, "#demo")
    def _demo(self) -> None:
        try:
            client = self._first_run.open_demo()
        except SetupError as exc:
            self._problem(f"the demo cannot start: {exc}")
            return
        self.dismiss(Started(client, setup_detect.DEMO_TASK))

    def _problem(self, text: str) -> None:
        problem = self.query_one("#problem", Static)
        problem.update(Text(text, style="bold red"))
        problem.add_class("-shown")


def _found_text(detection: Detection) -> Text:
    """The keys and servers found, a line each kind."""
    text = Text()
    keys = [k for k in detection.keys if k.source]
    missing = [k.provider for k in detection.keys if not k.source]
    for key in keys:
        if key.problem:
            text.append("✗ ", style="bold red")
            text.append(f"{key.provider}: unusable key in {key.source}  ")
        else:
            text.append("✓ ", style="bold green")
            text.append(f"{key.provider} key ({key.source})  ")
    if keys:
        text.append("\n")
    for server in detection.servers:
        if server.answering:
            text.append("✓ ", style="bold green")
            count = f"{len(server.models)} models" if server.models else server.note
            text.append(f"{server.label} ({server.host}): {count}  ")
        else:
            text.append(f"· {server.label} ({server.host}): {server.note}  ", style="dim")
    if missing:
        text.append("\nno key for ", style="dim")
        text.append(", ".join(missing), style="dim")
    if detection.catalog_problem:
        text.append(f"\n{detection.catalog_problem}", style="bold yellow")
    return text


def _model_label(choice: ModelChoice) -> Text:
    label = Text(f"{choice.name:<30} ", style="bold" if choice.ready else "")
    label.append(f"{choice.detail:<22} ", style="dim")
    if choice.ready:
        label.append("ready", style="green")
    else:
        label.append("no key", style="dim")
    return label
