"""What every front end shows alike and keeps alike: how a tool call and a history read,
the notices' words, fuzzy path ranking, tables fitted to a width, the prompt history, the
app's preferences and transcripts. Below the slash commands and every front end; imports
nothing of a session."""
