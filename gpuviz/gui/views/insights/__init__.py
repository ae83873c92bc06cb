"""The Insights view: where each step's time went, and the advisor's findings, and its Qt-free
model."""
