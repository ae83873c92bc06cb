"""Pure functions from a Trace to figures and tables. Never imports torch or Qt."""
