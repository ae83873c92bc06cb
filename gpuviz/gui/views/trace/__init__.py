"""The trace's own views: the Timeline's slot in a tab, the Summary and the Kernels table."""
