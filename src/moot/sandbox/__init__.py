"""Where shell commands run: bubblewrap, Docker, or (deliberately) the host."""
