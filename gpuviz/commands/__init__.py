"""One module per CLI command, imported by ``gpuviz.cli`` only when that command runs."""
