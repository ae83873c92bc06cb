"""Text and JSON of analysis results (tables, findings, comparisons), shared by the CLI's
commands, the agents' server and the app's Markdown export (DESIGN.md's layer table): the
commands and the agents never import each other, so what both print lives here."""
