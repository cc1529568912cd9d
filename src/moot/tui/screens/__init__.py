"""The app's screens besides the main one: help, the event inspector, a picker, the setup."""
