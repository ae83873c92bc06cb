"""Many devices and ranks: the Ranks view (rank × step heatmap, stragglers) and the Splits view
(DataParallel's batch split)."""
