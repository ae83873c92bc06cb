"""The Memory view: memory over time, and an allocator snapshot's timeline, segments, sites and
ranks."""
