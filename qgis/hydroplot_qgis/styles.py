"""Layer styles as the library's map draws its layers (src/render/style.rs:
flowlines blue, the basin a black outline without fill, network waterbodies
light blue and the others dark blue, both outlined black; outlets black
dots). R's line width 1 is 1/96 inch, 0.26 mm."""

from qgis.core import (
    QgsFillSymbol,
    QgsLineSymbol,
    QgsMarkerSymbol,
    QgsSingleSymbolRenderer,
)

#: R's lwd = 1 in millimetres.
LWD_MM = "0.26"

#: plot-data layer -> (symbol class, its properties).
STYLES = {
    "flowline": (QgsLineSymbol, {"line_color": "#0000ff", "line_width": LWD_MM}),
    "basin": (QgsFillSymbol, {"style": "no", "outline_color": "#000000", "outline_width": LWD_MM}),
    "network_wtbd": (QgsFillSymbol, {"color": "#add8e6", "outline_color": "#000000", "outline_width": LWD_MM}),
    "off_network_wtbd": (QgsFillSymbol, {"color": "#00008b", "outline_color": "#000000", "outline_width": LWD_MM}),
    "outlets": (QgsMarkerSymbol, {"name": "circle", "color": "#000000", "outline_style": "no", "size": "2"}),
}


def apply(layer, kind):
    """Gives ``layer`` the style of plot-data layer ``kind``."""
    symbol_class, properties = STYLES[kind]
    layer.setRenderer(QgsSingleSymbolRenderer(symbol_class.createSimple(dict(properties))))
    layer.triggerRepaint()
