"""The PySide6 + pyqtgraph app. The only package that imports Qt."""
