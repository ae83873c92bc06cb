"""The Timeline view: lanes of slices drawn at pixel resolution (see ``qt_timeline``)."""
