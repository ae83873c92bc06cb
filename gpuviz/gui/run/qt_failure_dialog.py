"""The dialog of a failed run: the message, an expandable traceback, and where the partial trace is.

It is shown without modality (``show()``): the app stays usable, and the
partial trace opens in a tab behind it. The message, the traceback and the paths are data (a
user's exception may quote anything): they are escaped into the rich labels and shown as plain
text in the traceback box.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import html_safe, terminal_safe, title_safe
from gpuviz.gui.qt_text import set_rich


class QtFailureDialog(QDialog):
    """Shows why a run failed.

    Parameters
    ----------
    title : str
        What failed (``loops on cpu``).
    message : str
        ``Failed.error``: one line.
    traceback : str
        ``Failed.traceback`` (hidden until "Show traceback" is pressed).
    partial_trace : str, optional
        The partial trace's path; the caller opens it.
    """

    def __init__(
        self,
        title: str,
        message: str,
        traceback: str = "",
        partial_trace: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title_safe(f"Run failed: {title}"))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.message = message
        self.partial_trace = partial_trace

        icon = QLabel()
        icon.setPixmap(
            self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical).pixmap(40, 40)
        )
        text = QLabel()
        set_rich(text, f"<b>{html_safe(title)} failed</b><br>{html_safe(message)}")
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label = text
        if partial_trace:
            where = (
                f"What was recorded is kept: the partial trace <tt>{html_safe(partial_trace)}</tt> "
                "is opened in a new tab."
            )
        else:
            where = "No trace was recorded before the failure."
        self.trace_label = QLabel()
        set_rich(self.trace_label, where)
        self.trace_label.setWordWrap(True)
        self.trace_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.traceback_edit = QPlainTextEdit(terminal_safe(traceback) or "(no traceback)")
        self.traceback_edit.setReadOnly(True)
        self.traceback_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.traceback_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.traceback_edit.setMinimumHeight(220)
        self.traceback_edit.setVisible(False)
        self.toggle = QPushButton("Show traceback")
        self.toggle.setCheckable(True)
        self.toggle.setEnabled(bool(traceback))
        self.toggle.toggled.connect(self._on_toggled)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        buttons.accepted.connect(self.close)

        top = QHBoxLayout()
        top.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(text, 1)
        row = QHBoxLayout()
        row.addWidget(self.toggle)
        row.addStretch(1)
        row.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.trace_label)
        layout.addWidget(self.traceback_edit, 1)
        layout.addLayout(row)
        self.resize(640, 200)

    def traceback_shown(self) -> bool:
        """Whether the traceback is expanded."""
        return self.traceback_edit.isVisible()

    def _on_toggled(self, on: bool) -> None:
        self.traceback_edit.setVisible(on)
        self.toggle.setText("Hide traceback" if on else "Show traceback")
        self.resize(self.width(), 520 if on else 200)


__all__ = ["QtFailureDialog"]
