"""A form generated from a workload's torch-free parameter declarations.

One editor per :class:`~gpuviz.workloads.params.Param`: a check box for ``bool``, a combo box for
``choice``, a line edit for the others (ints, floats, text and int lists, parsed exactly as the
CLI parses ``-p name=value``, so the app and the CLI accept the same values and give the same
messages). Help and the allowed values are the tooltip. A value that does not parse or is out of
bounds is flagged at once (red frame, the message as tooltip and below the form), and
:meth:`QtParamForm.is_valid` turns false so the panel blocks Run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import html_safe
from gpuviz.errors import BadInputError
from gpuviz.gui.qt_text import plain_label, set_plain
from gpuviz.workloads.params import Param

INVALID_STYLE = "QLineEdit { border: 2px solid #d62728; background: #fff0f0; }"


def value_text(param: Param, value: Any) -> str:
    """The text a line edit shows for ``value`` (what ``-p`` would take)."""
    if param.kind == "ints":
        return ",".join(str(v) for v in value)
    if param.kind == "bool":
        return "true" if value else "false"
    return str(value)


class QtParamForm(QWidget):
    """Editors for a list of parameters, with live validation.

    Signals
    -------
    changed()
        A value was edited (valid or not).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.params: list[Param] = []
        self.editors: dict[str, QWidget] = {}
        self._errors: dict[str, str] = {}
        self._form = QFormLayout()
        self._form.setContentsMargins(0, 0, 0, 0)
        self._form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.error_label = plain_label()  # it quotes what was typed
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.setVisible(False)
        self.empty_label = QLabel("This workload has no parameters.")
        self.empty_label.setStyleSheet("color: #666;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._form)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.error_label)

    # -- building ---------------------------------------------------------------------------
    def set_params(self, params: Sequence[Param], values: Mapping[str, Any] | None = None) -> None:
        """Rebuild the form for ``params``, showing ``values`` where given (else defaults).

        A given value that is not allowed (an old setting) is shown and flagged.
        """
        while self._form.rowCount():
            self._form.removeRow(0)
        self.params = list(params)
        self.editors = {}
        self._errors = {}
        values = dict(values or {})
        for p in self.params:
            editor = self._make_editor(p)
            self.editors[p.name] = editor
            label = plain_label(p.name)
            tip = f"<qt>{self._tooltip(p)}</qt>"
            label.setToolTip(tip)
            editor.setToolTip(tip)
            self._form.addRow(label, editor)
            self.set_value(p.name, values.get(p.name, p.default))
        self.empty_label.setVisible(not self.params)
        self._validate_all()

    def _tooltip(self, p: Param) -> str:
        # A user file's parameters, help and defaults are data: escaped into the rich tooltip.
        parts = [f"<b>{html_safe(p.name)}</b>"]
        if p.help:
            parts.append(html_safe(p.help))
        parts.append(html_safe(f"Allowed: {p.allowed()}."))
        parts.append(html_safe(f"Default: {value_text(p, p.default)}."))
        return "<br>".join(parts)

    def _make_editor(self, p: Param) -> QWidget:
        if p.kind == "bool":
            cb = QCheckBox()
            cb.toggled.connect(lambda _on, n=p.name: self._on_edited(n))
            return cb
        if p.kind == "choice":
            combo = QComboBox()
            combo.addItems(list(p.choices))
            combo.currentIndexChanged.connect(lambda _i, n=p.name: self._on_edited(n))
            return combo
        edit = QLineEdit()
        edit.setPlaceholderText(p.allowed())
        edit.textChanged.connect(lambda _t, n=p.name: self._on_edited(n))
        return edit

    # -- values -----------------------------------------------------------------------------
    def set_value(self, name: str, value: Any) -> None:
        """Show ``value`` (typed, or ``-p`` text) in ``name``'s editor; it is validated."""
        p = self._param(name)
        editor = self.editors[name]
        if isinstance(editor, QCheckBox):
            if isinstance(value, str):
                try:
                    value = p.parse(value)
                except BadInputError:
                    value = p.default
            editor.setChecked(bool(value))
        elif isinstance(editor, QComboBox):
            i = editor.findText(str(value))
            editor.setCurrentIndex(i if i >= 0 else editor.findText(str(p.default)))
        elif isinstance(editor, QLineEdit):
            text = value if isinstance(value, str) and p.kind != "str" else None
            editor.setText(text if text is not None else value_text(p, value))
        self._validate(name)

    def set_text(self, name: str, text: str) -> None:
        """Type ``text`` into ``name``'s editor (as a user would)."""
        editor = self.editors[name]
        if isinstance(editor, QLineEdit):
            editor.setText(text)
        else:
            self.set_value(name, text)

    def reset(self) -> None:
        """Every parameter back to its default."""
        for p in self.params:
            self.set_value(p.name, p.default)

    def _param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def _read(self, p: Param) -> Any:
        editor = self.editors[p.name]
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if isinstance(editor, QComboBox):
            return p.validate(editor.currentText())
        assert isinstance(editor, QLineEdit)
        return p.parse(editor.text())

    def values(self) -> dict[str, Any]:
        """Every parameter's typed value.

        Raises
        ------
        BadInputError
            For the first invalid one (the message names it and its allowed values).
        """
        out = {}
        for p in self.params:
            out[p.name] = self._read(p)
        return out

    def texts(self) -> dict[str, Any]:
        """What each editor holds, valid or not (typed where it parses, else its text)."""
        out: dict[str, Any] = {}
        for p in self.params:
            try:
                out[p.name] = self._read(p)
            except BadInputError:
                editor = self.editors[p.name]
                out[p.name] = editor.text() if isinstance(editor, QLineEdit) else p.default
        return out

    def errors(self) -> dict[str, str]:
        """Parameter -> message, for each invalid value."""
        return dict(self._errors)

    def is_valid(self) -> bool:
        """Whether every value is allowed."""
        return not self._errors

    # -- validation -------------------------------------------------------------------------
    def _on_edited(self, name: str) -> None:
        self._validate(name)
        self.changed.emit()

    def _validate_all(self) -> None:
        for p in self.params:
            self._validate(p.name)

    def _validate(self, name: str) -> None:
        p = self._param(name)
        editor = self.editors[name]
        try:
            self._read(p)
        except BadInputError as exc:
            # "-p n=abc: n must be an int from 0 to 100" reads as a CLI message; the form
            # shows the part after the colon.
            msg = str(exc)
            self._errors[name] = msg.split(": ", 1)[1] if msg.startswith("-p ") else msg
        else:
            self._errors.pop(name, None)
        bad = name in self._errors
        if isinstance(editor, QLineEdit):
            editor.setStyleSheet(INVALID_STYLE if bad else "")
            editor.setToolTip(
                "<qt>"
                + (f"<b>{html_safe(self._errors[name])}</b><br>" if bad else "")
                + self._tooltip(p)
                + "</qt>"
            )
        set_plain(self.error_label, "\n".join(self._errors.values()))
        self.error_label.setVisible(bool(self._errors))


__all__ = ["INVALID_STYLE", "QtParamForm", "value_text"]
