// Helm's side of an MCP App's host page. Runs in an isolated JavaScript world of the host page's
// main frame, after qwebchannel.js; the host page has no script of its own. It makes the one
// sandboxed frame the app runs in (an opaque origin: scripts, nothing else) and relays JSON-RPC:
// every message the app posts to its parent goes, as JSON text, to this frame's bridge object,
// which knows which app it is; every message Helm sends goes back to the app's frame only.
// A message larger than Helm takes never crosses: the app is answered here that it was refused
// (when it was a request), and Helm is told only its method and size, to count the refusal.
// The app's frame asks once for a port (app-port.js, Helm's script in the app's world): messages
// then go both ways over it, which costs the engine far less than a window message. What comes
// over the port is taken exactly as what the frame posts; until the port comes, and for what the
// app posts another way, the window's messages are used.
// The frame's color-scheme is Helm's (light or dark), which is what prefers-color-scheme reads
// inside it: set before the app loads, and again whenever Helm's scheme changes.
(function () {
  'use strict';
  var MAX_MESSAGE_CHARS = %MAX_MESSAGE_CHARS%;
  var PORT_ASK = '%PORT_ASK%';
  var PORT_GIVE = '%PORT_GIVE%';
  var meta = document.querySelector('meta[name="helm-app"]');
  if (meta === null) return;
  var frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('allow', "camera 'none'; microphone 'none'; geolocation 'none'; clipboard-write 'none'");
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.setAttribute('title', 'app');
  var schemeMeta = document.querySelector('meta[name="helm-scheme"]');
  function setScheme(scheme) { frame.style.colorScheme = scheme === 'dark' ? 'dark' : 'light'; }
  setScheme(schemeMeta === null ? 'light' : schemeMeta.content);
  var bridge = null;
  var queued = [];
  var port = null; // the port the app's document last spoke on

  function toApp(data) {
    if (port !== null) { port.postMessage(data); return; }
    var target = frame.contentWindow;
    if (target !== null) target.postMessage(data, '*');
  }

  function refuse(data, length) {
    var request = data !== null && typeof data === 'object' && !Array.isArray(data) ? data : {};
    var method = typeof request.method === 'string' ? request.method.slice(0, 100) : '';
    var id = request.id;
    if (method !== '' && (typeof id === 'string' || typeof id === 'number')) {
      toApp({
        jsonrpc: '2.0', id: id,
        error: { code: -32000, message: 'too_large: Helm refused the message: it is larger than ' +
          MAX_MESSAGE_CHARS + ' characters as JSON' },
      });
    }
    var told = function () { bridge.refused(method, length); };
    if (bridge === null) queued.push(told); else told();
  }

  function fromApp(data) {
    var text;
    try {
      text = JSON.stringify(data);
    } catch (e) {
      return;
    }
    if (typeof text !== 'string') return;
    if (text.length > MAX_MESSAGE_CHARS) { refuse(data, text.length); return; }
    if (bridge === null) queued.push(function () { bridge.post(text); }); else bridge.post(text);
  }

  // A new port each time the frame asks (a reloaded app's document asks again), sent back with
  // the word the request named. What Helm sends goes over the port the app last spoke on, and
  // the one it spoke on before is closed then: a port that was asked for but never taken (its
  // word named no document) changes nothing. At most a few such ports are kept open.
  var unspoken = [];
  function givePort(target, word) {
    var channel = new MessageChannel();
    var mine = channel.port1;
    mine.onmessage = function (event) {
      if (port !== mine) {
        if (port !== null) port.close();
        port = mine;
        unspoken = unspoken.filter(function (other) { return other !== mine; });
      }
      fromApp(event.data);
    };
    unspoken.push(mine);
    if (unspoken.length > 4) unspoken.shift().close();
    target.postMessage(PORT_GIVE + word, '*', [channel.port2]);
  }

  function portAsked(data) {
    return typeof data === 'string' && data.length <= PORT_ASK.length + 32 &&
      data.slice(0, PORT_ASK.length) === PORT_ASK;
  }

  window.addEventListener('message', function (event) {
    if (event.source === null || event.source !== frame.contentWindow) return;
    if (portAsked(event.data)) { givePort(event.source, event.data.slice(PORT_ASK.length)); return; }
    fromApp(event.data);
  });

  new QWebChannel(qt.webChannelTransport, function (channel) {
    bridge = channel.objects.helmApp;
    bridge.deliver.connect(function (text) { toApp(JSON.parse(text)); });
    bridge.scheme.connect(setScheme);
    queued.splice(0).forEach(function (send) { send(); });
    bridge.ready();
  });

  frame.src = meta.content;
  document.body.appendChild(frame);
})();
