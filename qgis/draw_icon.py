"""Draws the plugin's icon, hydroplot_qgis/icon.png (64 x 64): a basin
outline with its blue river network, in the library's map colours. Run
once with QGIS's Python (PyQt5) when the design changes:

    QT_QPA_PLATFORM=offscreen python3 qgis/draw_icon.py
"""

import pathlib

from qgis.PyQt.QtCore import QPointF, Qt
from qgis.PyQt.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)

SIZE = 64
BASIN = [(10, 14), (26, 5), (44, 8), (57, 20), (55, 38), (44, 50), (33, 59), (22, 50), (9, 36)]
# Each river: the main stem first, then tributaries joining it.
RIVERS = [
    [(33, 57), (32, 44), (30, 32), (27, 20), (24, 10)],
    [(31, 38), (40, 30), (50, 22)],
    [(30, 32), (20, 28), (13, 22)],
    [(32, 46), (43, 42), (52, 35)],
]


def main():
    app = QGuiApplication([])  # noqa: F841 (QPainter needs one)
    image = QImage(SIZE, SIZE, QImage.Format_ARGB32)
    image.fill(Qt.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setPen(QPen(QColor("black"), 2.5))
    painter.setBrush(QColor(173, 216, 230, 140))
    painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in BASIN]))
    for width, river in zip((4.0, 2.5, 2.5, 2.5), RIVERS):
        path = QPainterPath(QPointF(*river[0]))
        for x, y in river[1:]:
            path.lineTo(QPointF(x, y))
        painter.setPen(QPen(QColor("blue"), width, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(path)
    painter.setPen(Qt.NoPen)
    painter.setBrush(QColor("black"))
    painter.drawEllipse(QPointF(33, 57), 4, 4)
    painter.end()
    out = pathlib.Path(__file__).resolve().parent / "hydroplot_qgis" / "icon.png"
    if not image.save(str(out)):
        raise SystemExit(f"cannot write {out}")
    print(out)


if __name__ == "__main__":
    main()
