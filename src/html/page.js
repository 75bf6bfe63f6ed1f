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

  // The level of detail per zoom level: the rule of the static map
  // (src/plot/lod.rs, Density::min_order) with the constants and flowline
  // lengths the library wrote into D.lod. null: every flowline as styled.
  function lodMinOrder(lod, zoom) {
    var res = lod.world / (256 * Math.pow(2, zoom)); // metres per CSS pixel
    function ink(min, width) {
      var px = 0;
      lod.lengths.forEach(function (e) {
        if (e[0] >= min) { px += e[1] / res * (width(e[0]) + lod.antialias); }
      });
      return px / (lod.area / (res * res));
    }
    if (!lod.lengths.length || ink(-Infinity, function () { return lod.lwd; }) <= lod.dense) { return null; }
    for (var i = 0; i < lod.lengths.length; i++) {
      var min = lod.lengths[i][0];
      var w = function (o) { return lod.lwd * (lod.base + lod.step * (o - min)); };
      if (ink(min, w) <= lod.budget) { return min; }
    }
    return lod.lengths[lod.lengths.length - 1][0];
  }

  // Restyles the flowlines for the current zoom: orders below the minimum
  // hidden (still in the layer, its count and popups), widths growing with
  // order, the main stem drawn one order wider than the highest.
  function applyLod() {
    var lod = D.lod, flowlines = layers.flowline;
    var style = D.layers.filter(function (l) { return l.name === 'flowline'; })[0].style;
    var min = lodMinOrder(lod, map.getZoom());
    var top = lod.lengths.length ? lod.lengths[lod.lengths.length - 1][0] : 0;
    var stem = {};
    lod.mainstem.forEach(function (c) { stem[c] = true; });
    flowlines.setStyle(function (f) {
      if (min === null) { return style; }
      var p = f.properties || {};
      var order = stem[p.comid] ? top + 1 : (p.streamorde || 0);
      var s = Object.assign({}, style);
      if (order < min) {
        s.stroke = false;
      } else {
        s.weight = lod.lwd * (lod.base + lod.step * (order - min));
      }
      return s;
    });
    window.hydroplot.lodMinOrder = min;
  }

  var b = D.bbox;
  window.hydroplot = { map: map, layers: layers, lodMinOrder: null };
  map.fitBounds([[b[1], b[0]], [b[3], b[2]]]);
  if (D.lod && layers.flowline) {
    applyLod();
    map.on('zoomend', applyLod);
  }

  if (selftesting) { selftest(); }

  // Writes the layer counts, the flowline vertex nearest the centre (in
  // container pixels) and the popup a click on that flowline opens, then
  // closes the popup (the view stays: no auto-pan) for a screenshot; with
  // the level of detail, the zoom, the flowlines stroked at it and the
  // minimum order at each zoom 0-20.
  function selftest() {
    var out = { counts: {}, size: map.getSize() };
    if (D.lod && layers.flowline) {
      out.lod = {
        zoom: map.getZoom(),
        stroked: layers.flowline.getLayers().filter(function (l) { return l.options.stroke; }).length,
        minOrder: []
      };
      for (var z = 0; z <= 20; z++) { out.lod.minOrder.push(lodMinOrder(D.lod, z)); }
    }
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
