// hydroplot HTML map: builds the Leaflet map from the JSON in #hydroplot-data.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('hydroplot-data').textContent);
  var selftesting = location.hash === '#selftest';
  if (selftesting) {
    // A fixed map size, so that runs in windows of different sizes agree.
    document.getElementById('map').style.cssText = 'width:960px;height:600px';
  }
  var map = L.map('map', { zoomSnap: 0.25 });
  if (D.basemap) {
    L.tileLayer(D.basemap.template, {
      subdomains: D.basemap.subdomains.length ? D.basemap.subdomains : 'abc',
      maxZoom: D.basemap.maxZoom,
      attribution: D.basemap.attribution
    }).addTo(map);
  }

  // A popup as a table of the feature's kept attributes, built as DOM nodes
  // (never as HTML text) so attribute values cannot inject markup.
  function popup(label, props) {
    var div = document.createElement('div');
    div.className = 'hp-popup';
    var title = document.createElement('b');
    title.textContent = label;
    div.appendChild(title);
    var table = document.createElement('table');
    Object.keys(props).forEach(function (k) {
      var tr = table.insertRow();
      var th = document.createElement('th');
      th.textContent = k;
      tr.appendChild(th);
      tr.insertCell().textContent = String(props[k]);
    });
    div.appendChild(table);
    return div;
  }

  var layers = {};
  var control = L.control.layers(null, null, { collapsed: false });
  D.layers.forEach(function (l) {
    var layer = L.geoJSON(l.data, {
      style: function () { return l.style; },
      pointToLayer: function (f, latlng) {
        var icon = (l.icons && (l.icons[f.properties.type] || l.icons['default'])) || null;
        if (!icon) { return L.circleMarker(latlng, { radius: 6 }); }
        return L.marker(latlng, {
          icon: L.icon({
            iconUrl: icon.url,
            iconSize: [icon.size, icon.size],
            iconAnchor: [icon.size / 2, icon.size / 2],
            className: 'hp-symbol'
          })
        });
      },
      onEachFeature: function (f, lyr) { lyr.bindPopup(popup(l.label, f.properties || {})); }
    }).addTo(map);
    layers[l.name] = layer;
    control.addOverlay(layer, l.label + ' (' + layer.getLayers().length + ')');
  });
  control.addTo(map);
  L.control.scale({ metric: true, imperial: true }).addTo(map);
  var b = D.bbox;
  map.fitBounds([[b[1], b[0]], [b[3], b[2]]]);
  window.hydroplot = { map: map, layers: layers };

  if (selftesting) { selftest(); }

  // Writes the layer counts, the flowline vertex nearest the centre (in
  // container pixels) and the popup a click on that flowline opens, then
  // closes the popup (the view stays: no auto-pan) for a screenshot.
  function selftest() {
    var out = { counts: {}, size: map.getSize() };
    Object.keys(layers).forEach(function (k) { out.counts[k] = layers[k].getLayers().length; });
    var centre = map.getSize().divideBy(2);
    var best = null;
    (layers.flowline ? layers.flowline.getLayers() : []).forEach(function (lyr) {
      var lls = L.LineUtil.isFlat(lyr.getLatLngs()) ? lyr.getLatLngs() : [].concat.apply([], lyr.getLatLngs());
      lls.slice(1, -1).forEach(function (ll) {
        var p = map.latLngToContainerPoint(ll);
        var d = p.distanceTo(centre);
        if (!best || d < best.d) { best = { d: d, p: p, layer: lyr }; }
      });
    });
    if (best) {
      out.vertex = { x: best.p.x, y: best.p.y, comid: best.layer.feature.properties.comid };
      var r = map.getContainer().getBoundingClientRect();
      var ev = new MouseEvent('click', {
        bubbles: true, cancelable: true, view: window,
        clientX: r.left + best.p.x, clientY: r.top + best.p.y
      });
      best.layer.getPopup().options.autoPan = false;
      best.layer.getElement().dispatchEvent(ev);
    }
    var content = document.querySelector('.leaflet-popup-content');
    out.popup = content ? content.textContent : null;
    map.closePopup();
    var pre = document.createElement('pre');
    pre.id = 'hydroplot-selftest';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
})();
