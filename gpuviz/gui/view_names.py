"""The names of a trace's views, in tab order: no Qt, so the CLI's ``--view`` can list them."""

VIEWS = (
    "insights",
    "timeline",
    "splits",
    "memory",
    "kernels",
    "operators",
    "modules",
    "source",
    "roofline",
    "summary",
    "ranks",
)
